import { type PluginTransformQueryArgs, type PluginTransformResultArgs, sql, type Transaction } from 'kysely';
import { sqlTextsOf } from '../../../test/support/query-counter';
import { type Database, EventStore, migrateToLatest, openDatabase, type OpenDatabase } from '../../events';
import type { NewPrefixReport } from '../prefix-reports-plan';
import { insertReports } from '../prefix-reports-write';

let open: OpenDatabase;
beforeAll(async () => {
  open = await openDatabase({ kind: 'pglite' });
  await migrateToLatest(open.db);
}, 120_000);
afterAll(() => open.close());

const BODY = '{"messages":[{"content":"a \\"quoted\\" \\\\ back, {braces}, 你好 🐉, NULL"}]}';

/** The call's `llm.calling@1` in the log (its own session of tenant t1): its position, where the write reads the body. */
const calls = new Map<string, string>();
async function logCall(callId: string, body = BODY): Promise<string> {
  const data = {
    executionId: `${callId}-e`,
    turnId: `${callId}-turn`,
    callId,
    pluginId: 'p',
    runtimeId: 'narrator',
    attempt: 1,
    provider: 'openai',
    model: 'gpt',
    body,
  };
  const { events } = await new EventStore(open.db).append({
    tenantId: 't1',
    streamId: `s-${callId}`,
    expectedVersion: 0,
    events: [{ type: 'llm.calling@1', data }],
  });
  calls.set(callId, String(events[0].globalPosition));
  return calls.get(callId)!;
}

const row = (callId: string, over: Partial<NewPrefixReport> = {}): NewPrefixReport => ({
  call_id: callId,
  tenant_id: 't1',
  session_id: `s-${callId}`,
  turn_id: `${callId}-turn`,
  turn: 2,
  runtime: 'p/narrator',
  position: calls.get(callId) ?? '9007199254740993',
  first_in_turn: true,
  protocol: 'openai',
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
    for (const id of ['w1', 'w2', 'w3', 'w4']) await logCall(id);
    const one = await textsOf((trx) => insertReports(trx, [row('w1')]));
    const three = await textsOf((trx) => insertReports(trx, [row('w2'), row('w3'), row('w4')]));
    expect(one).toHaveLength(1);
    expect(three).toEqual(one);
    expect(await textsOf((trx) => insertReports(trx, []))).toEqual([]);
  });

  it("writes each column as given (text, numbers, JSON, nulls), the body its call's in the log, and leaves a call id that has a row as it is", async () => {
    for (const id of ['r1', 'r2', 'r3']) await logCall(id);
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
    await open.db.transaction().execute((trx) => insertReports(trx, [row('r1', { turn: 99, protocol: 'other' }), row('r3')]));
    const rows = await read(['r1', 'r2', 'r3']);
    expect(rows.map((r) => r.call_id)).toEqual(['r1', 'r2', 'r3']);
    // a bigint as the driver reads it
    expect({ ...rows[0], position: String(rows[0].position) }).toEqual({
      ...full,
      body: BODY,
      layout: JSON.parse(full.layout as string),
      first_difference: JSON.parse(full.first_difference as string),
    });
    expect(rows[1]).toMatchObject({ call_id: 'r2', shared_tokens: null, shared_percent: null, first_difference: null, model: 'gpt', first_in_turn: true });
  });

  it("reads the body from the log: the call's own text, never sent as a parameter; a row whose call the log does not hold is not written", async () => {
    const body = JSON.stringify({ messages: [{ role: 'user', content: 'the body 😀 "q" \\ שלום e\u0301' }], n: 1.5 });
    await logCall('b1', body);
    const sent: unknown[] = [];
    const recording = open.db.withPlugin({
      transformQuery: ({ node, queryId }: PluginTransformQueryArgs) => {
        sent.push(...open.db.getExecutor().compileQuery(node, queryId).parameters);
        return node;
      },
      transformResult: ({ result }: PluginTransformResultArgs) => Promise.resolve(result),
    });
    // b2's position is b1's, in another session; b3's is b1's in b1's session of another tenant: neither is its call
    const b1 = row('b1');
    await recording
      .transaction()
      .execute((trx) => insertReports(trx, [b1, { ...row('b2'), position: b1.position }, { ...b1, call_id: 'b3', tenant_id: 't2' }]));
    expect(JSON.stringify(sent)).not.toContain('the body');
    const rows = await read(['b1', 'b2', 'b3']);
    expect(rows.map((r) => [r.call_id, r.body])).toEqual([['b1', body]]);
  });
});
