import { sql } from 'kysely';
import { endOfLog, inputEvent } from '../../../test/support/append-hooks';
import { EventStore, migrateToLatest, openDatabase, type OpenDatabase, type OrderedLogEntry } from '..';
import { readLanes } from '../projections/async/lane-read';

/** Its outcome: the event, or the error's class and message. */
const decoded = (e: OrderedLogEntry) => {
  try {
    return { event: e.decode() };
  } catch (error) {
    return { error: `${(error as Error).constructor.name}: ${(error as Error).message}` };
  }
};

describe("readLanes: the projector's read", () => {
  let open: OpenDatabase;
  let store: EventStore;
  beforeAll(async () => {
    open = await openDatabase({ kind: 'pglite' });
    await migrateToLatest(open.db);
    store = new EventStore(open.db);
  }, 120_000);
  afterAll(() => open.close());

  it('reads what readAfterEach reads with the same types (a body and a reply read as text decode to the same events, a body that is no string fails as it does there)', async () => {
    const from = await endOfLog(store);
    const ids = { executionId: 'x1', turnId: 'u1', callId: 'c1', pluginId: 'p', runtimeId: 'r' };
    const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'say "hi"\n\\ 🌊 你好' }] });
    const calling = { ...ids, attempt: 1, provider: 'openai', model: 'm', body, layout: { systemSections: [], messageSections: ['history'] } };
    const usage = { inputTokens: 4, outputTokens: 1, cachedInputTokens: 0 };
    for (const [i, s] of ['lane-a', 'lane-b', 'lane-c'].entries()) {
      await store.append({
        tenantId: 't',
        streamId: s,
        expectedVersion: 0,
        events: [
          inputEvent(s, 1),
          { type: 'llm.calling@1', data: { ...calling, callId: `${s}-c` } },
          { type: 'llm.responded@1', data: { ...ids, callId: `${s}-c`, finishReason: 'stop', usage, ...(i === 0 ? {} : { reply: '{"text":"a \\"b\\""}' }) } },
        ],
      });
    }
    // a body that is not a string (the schema refuses it): left in the data, it fails the same way
    await sql`insert into events (tenant_id, stream_id, stream_version, type, data)
      values ('t', 'lane-d', 1, 'llm.calling@1', ${JSON.stringify({ ...calling, body: { not: 'text' } })}::jsonb)`.execute(open.db);
    const reads = [...Array(16).keys()].map((partition) => ({ partition, cursor: from }));
    const types = ['llm.calling@1', 'llm.responded@1'];
    const expected = await store.readAfterEach(reads, { limit: 100, types });
    const read = await readLanes(open.db, reads, { limit: 100, types });
    const outcome = (r: OrderedLogEntry[][]) => r.map((entries) => entries.map((e) => [e.cursor, e.type, e.streamId, decoded(e)]));
    expect(outcome(read)).toEqual(outcome(expected));
    expect(read.flat()).toHaveLength(10);
    const lane = (type: string) => read.flat().filter((e) => e.type === type && e.streamId !== 'lane-d');
    expect(lane('llm.calling@1').map((e) => (e.decode().data as { body: string }).body)).toEqual([body, body, body]);
    expect(lane('player-input.submitted@1').map(decoded)).toEqual(
      lane('player-input.submitted@1').map(() => ({ error: expect.stringMatching(/read without its data/) })),
    );
    expect(decoded(read.flat().find((e) => e.streamId === 'lane-d')!)).toMatchObject({ error: expect.stringMatching(/expected string/) });
  });
});
