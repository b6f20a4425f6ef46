import { sql, type Transaction } from 'kysely';
import { sqlTextsOf } from '../../../test/support/query-counter';
import { type Database, migrateToLatest, openDatabase, type OpenDatabase } from '../../events';
import type { NewPrefixReport } from '../prefix-reports-plan';
import { insertReports } from '../prefix-reports-write';

let open: OpenDatabase;
beforeAll(async () => {
  open = await openDatabase({ kind: 'pglite' });
  await migrateToLatest(open.db);
}, 120_000);
afterAll(() => open.close());

const row = (callId: string, over: Partial<NewPrefixReport> = {}): NewPrefixReport => ({
  call_id: callId,
  tenant_id: 't1',
  session_id: 's1',
  turn_id: `${callId}-turn`,
  turn: 2,
  runtime: 'p/narrator',
  position: '9007199254740993',
  first_in_turn: true,
  protocol: 'openai',
  body: '{"messages":[{"content":"a \\"quoted\\" \\\\ back, {braces}, 你好 🐉, NULL"}]}',
  layout: JSON.stringify({ systemSections: [{ name: 'rules', length: 3 }] }),
  request_tokens: 40,
  shared_tokens: null,
  shared_percent: null,
  first_difference: null,
  provider_cached_tokens: null,
  provider_input_tokens: null,
  model: 'gpt',
  provider_output_tokens: null,
  ...over,
});

const textsOf = (run: (trx: Transaction<Database>) => Promise<void>) => sqlTextsOf(open.db, run);

const read = async (callIds: string[]) =>
  (await sql<Record<string, unknown>>`select * from prefix_reports where call_id = any(${callIds}::text[]) order by call_id`.execute(open.db)).rows;

describe('insertReports', () => {
  it('sends one statement of the same text whatever the number of rows', async () => {
    const one = await textsOf((trx) => insertReports(trx, [row('w1')]));
    const three = await textsOf((trx) => insertReports(trx, [row('w2'), row('w3'), row('w4')]));
    expect(one).toHaveLength(1);
    expect(three).toEqual(one);
    expect(await textsOf((trx) => insertReports(trx, []))).toEqual([]);
  });

  it('writes each column as given (text, numbers, JSON, nulls) and leaves a call id that has a row as it is', async () => {
    const full = row('r1', {
      shared_tokens: 30,
      shared_percent: 0.75,
      first_difference: JSON.stringify({ at: 'messages[1]', before: 'x', after: 'y' }),
      provider_cached_tokens: 20,
      provider_input_tokens: 40,
      provider_output_tokens: 5,
      first_in_turn: false,
      model: null,
    });
    await open.db.transaction().execute((trx) => insertReports(trx, [full, row('r2')]));
    await open.db.transaction().execute((trx) => insertReports(trx, [row('r1', { turn: 99, body: 'other' }), row('r3')]));
    const rows = await read(['r1', 'r2', 'r3']);
    expect(rows.map((r) => r.call_id)).toEqual(['r1', 'r2', 'r3']);
    // a bigint as the driver reads it
    expect({ ...rows[0], position: String(rows[0].position) }).toEqual({
      ...full,
      layout: JSON.parse(full.layout as string),
      first_difference: JSON.parse(full.first_difference as string),
    });
    expect(rows[1]).toMatchObject({ call_id: 'r2', shared_tokens: null, shared_percent: null, first_difference: null, model: 'gpt', first_in_turn: true });
  });
});
