import fc from 'fast-check';
import { sql } from 'kysely';
import { delayProjection, endOfLog, inputEvent, startReader } from '../../../test/support/append-hooks';
import { EventStore, LOG_START, migrateToLatest, openDatabase, type OpenDatabase, type OrderedLogEntry } from '..';

/** Its outcome: the event, or the error's class and message. */
const decoded = (e: OrderedLogEntry) => {
  try {
    return { event: e.decode() };
  } catch (error) {
    return { error: `${(error as Error).constructor.name}: ${(error as Error).message}` };
  }
};

/** The reader's rule on PGlite (one connection: transactions take turns, the rule is the same). */
describe('readAfter (PGlite)', () => {
  let open: OpenDatabase;
  const delay = delayProjection();
  let store: EventStore;
  beforeAll(async () => {
    open = await openDatabase({ kind: 'pglite' });
    await migrateToLatest(open.db);
    store = new EventStore(open.db, { inline: [delay.projection] });
  }, 120_000);
  afterAll(() => open.close());

  it('property: appenders over several streams with delays in their transactions and a reader in between read every event once, in stream order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ stream: fc.nat({ max: 4 }), events: fc.integer({ min: 1, max: 3 }), delayMs: fc.integer({ min: 0, max: 5 }) }), {
          minLength: 1,
          maxLength: 12,
        }),
        async (appends) => {
          const run = Math.random().toString(36).slice(2, 10);
          const reader = startReader(store, { from: await endOfLog(store), limit: 2 });
          const versions = new Map<string, number>();
          await Promise.all(
            [0, 1, 2, 3, 4].map(async (i) => {
              const streamId = `${run}-${i}`;
              for (const a of appends.filter((x) => x.stream === i)) {
                const version = versions.get(streamId) ?? 0;
                delay.plan(streamId, version + 1, a.delayMs);
                const events = Array.from({ length: a.events }, (_, k) => inputEvent(streamId, version + k + 1));
                versions.set(streamId, (await store.append({ tenantId: 't', streamId, expectedVersion: version, events })).version);
              }
            }),
          );
          const total = appends.reduce((n, a) => n + a.events, 0);
          const read = await reader.finish(total);
          expect(read).toHaveLength(total);
          expect(new Set(read.map((e) => e.globalPosition)).size).toBe(total);
          for (const [streamId, n] of versions) {
            expect(read.filter((e) => e.streamId === streamId).map((e) => e.decode().streamVersion)).toEqual(Array.from({ length: n }, (_, k) => k + 1));
          }
        },
      ),
      { numRuns: 15, endOnFailure: true },
    );
  }, 300_000);

  it('a partition reader reads only its partition, in the same order', async () => {
    const from = await endOfLog(store);
    const streams = Array.from({ length: 20 }, (_, i) => `part-${i}`);
    for (const s of streams) await store.append({ tenantId: 't', streamId: s, expectedVersion: 0, events: [inputEvent(s, 1), inputEvent(s, 2)] });
    const all = await startReader(store, { from }).finish(40);
    const partitions = new Map<number, string[]>();
    const rows = await open.db.selectFrom('events').select(['stream_id', 'log_partition']).where('stream_id', 'in', streams).execute();
    for (const r of rows) partitions.set(r.log_partition, [...new Set([...(partitions.get(r.log_partition) ?? []), r.stream_id])]);
    expect(partitions.size).toBeGreaterThan(1);
    for (const [p, own] of partitions) {
      const mine = await startReader(store, { from, partition: p, limit: 3 }).finish(own.length * 2);
      expect(mine.map((e) => e.globalPosition)).toEqual(all.filter((e) => own.includes(e.streamId)).map((e) => e.globalPosition));
    }
  }, 120_000);

  it('readAfterEach: several partitions’ reads (one at two cursors, one with nothing after its cursor) in one statement read what readAfter reads of each', async () => {
    const from = await endOfLog(store);
    const streams = Array.from({ length: 12 }, (_, i) => `each-${i}`);
    for (const s of streams)
      await store.append({ tenantId: 't', streamId: s, expectedVersion: 0, events: [inputEvent(s, 1), inputEvent(s, 2), inputEvent(s, 3)] });
    const rows = await open.db.selectFrom('events').select(['stream_id', 'log_partition']).where('stream_id', 'in', streams).execute();
    const used = [...new Set(rows.map((r) => r.log_partition))];
    expect(used.length).toBeGreaterThan(2);
    const [first, second] = used;
    const afterOne = (await store.readAfter(from, { partition: first, limit: 1 }))[0].cursor;
    const empty = [...Array(16).keys()].find((p) => !used.includes(p))!;
    const reads = [
      ...used.map((partition) => ({ partition, cursor: from })),
      { partition: first, cursor: afterOne },
      { partition: empty, cursor: from },
      { partition: second, cursor: LOG_START },
    ];
    for (const limit of [2, 100]) {
      const each = await store.readAfterEach(reads, { limit });
      const alone = await Promise.all(reads.map((r) => store.readAfter(r.cursor, { partition: r.partition, limit })));
      const seen = (read: OrderedLogEntry[][]) => read.map((entries) => entries.map((e) => [e.cursor, e.streamId, e.type, e.decode()]));
      expect(seen(each)).toEqual(seen(alone));
      expect(each[used.length + 1]).toEqual([]);
    }
    expect(await store.readAfterEach([], { limit: 10 })).toEqual([]);
  });

  it('readAfterEach with types: events of other types are read without their data (the cursor moves past them, decode throws), those of the types as without', async () => {
    const from = await endOfLog(store);
    const streams = Array.from({ length: 6 }, (_, i) => `typed-${i}`);
    for (const s of streams) await store.append({ tenantId: 't', streamId: s, expectedVersion: 0, events: [inputEvent(s, 1), inputEvent(s, 2)] });
    const reads = [...Array(16).keys()].map((partition) => ({ partition, cursor: from }));
    const all = await store.readAfterEach(reads, { limit: 100 });
    const type = all.flat()[0].type;
    const place = (read: OrderedLogEntry[][]) => read.map((entries) => entries.map((e) => [e.cursor, e.globalPosition, e.tenantId, e.streamId, e.type]));
    const typed = await store.readAfterEach(reads, { limit: 100, types: [type, 'llm.calling@1'] });
    expect(typed.map((entries) => entries.map((e) => [e.cursor, e.decode()]))).toEqual(all.map((entries) => entries.map((e) => [e.cursor, e.decode()])));
    const others = await store.readAfterEach(reads, { limit: 100, types: ['llm.calling@1'] });
    expect(place(others)).toEqual(place(all));
    expect(others.flat()).toHaveLength(streams.length * 2);
    for (const e of others.flat()) expect(() => e.decode()).toThrow(/read without its data/);
    const { rows } = await sql<{ data: unknown }>`select data from events where stream_id = ${streams[0]}`.execute(open.db);
    expect(rows.every((r) => r.data !== null)).toBe(true); // the log itself holds them, of course
  });

  it('readAfterEach: a body and a reply read as text (out of the data) decode to the events readAfter reads; a body that is no string fails as it does there', async () => {
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
    const expected = await Promise.all(reads.map((r) => store.readAfter(r.cursor, { partition: r.partition, limit: 100 })));
    const read = await store.readAfterEach(reads, { limit: 100, types });
    const outcome = (r: OrderedLogEntry[][], only: (type: string) => boolean) =>
      r.map((entries) => entries.filter((e) => only(e.type)).map((e) => [e.cursor, e.type, e.streamId, decoded(e)]));
    expect(outcome(read, (type) => types.includes(type))).toEqual(outcome(expected, (type) => types.includes(type)));
    expect(await store.readAfterEach(reads, { limit: 100 }).then((all) => outcome(all, () => true))).toEqual(outcome(expected, () => true));
    expect(read.flat()).toHaveLength(10);
    const lane = (type: string) => read.flat().filter((e) => e.type === type && e.streamId !== 'lane-d');
    expect(lane('llm.calling@1').map((e) => (e.decode().data as { body: string }).body)).toEqual([body, body, body]);
    expect(lane('player-input.submitted@1').map(decoded)).toEqual(
      lane('player-input.submitted@1').map(() => ({ error: expect.stringMatching(/read without its data/) })),
    );
    expect(decoded(read.flat().find((e) => e.streamId === 'lane-d')!)).toMatchObject({ error: expect.stringMatching(/expected string/) });
  });
});
