import { sql } from 'kysely';
import { EventStore, InlineProjectionFailedError, inlineProjections, migrateToLatest, openDatabase, type OpenDatabase } from '../..';
import type { InlineProjection } from '../projection';
import { insertedRow } from '../../stream-lock';
import { ev, type Ids, runStatementRowsCase, statementRowsCases } from './test/statement-rows';

/**
 * The inline projections' writes made in the append's own statement (data-modifying CTEs) write
 * the rows `applyBatch` writes (a rebuild of the session), on PGlite (the embedded database);
 * `test/integration/inline-statement-rows.test.ts` runs the same cases on PostgreSQL.
 */
describe('inline projection writes in the append’s statement (PGlite)', () => {
  let open: OpenDatabase;
  beforeAll(async () => {
    open = await openDatabase({ kind: 'pglite' });
    await migrateToLatest(open.db);
  }, 120_000);
  afterAll(() => open.close());

  describe.each(['append', 'catchingUp'] as const)('through %s', (via) => {
    it.each(statementRowsCases.map((c) => [c.name, c] as const))('given a session, when %s in one statement each, then the rows of a rebuild', async (_, c) => {
      const { appended, rebuilt, oneStatement } = await runStatementRowsCase(open.db, c, via);
      expect(oneStatement.every(Boolean)).toBe(true);
      expect(appended.executions.length + appended.turn_messages.length).toBeGreaterThan(0);
      expect(appended).toEqual(rebuilt);
    });
  });

  it('the inserted row of an index is one builder, made once, and reads that row (with its own parameter)', () => {
    expect(insertedRow(0)).toBe(insertedRow(0));
    expect(insertedRow(3)).not.toBe(insertedRow(0));
    const compiled = (i: number) => insertedRow(i).compile(open.db);
    expect(compiled(3).sql).toBe(compiled(0).sql);
    expect(compiled(0).parameters).toEqual([1]);
    expect(compiled(3).parameters).toEqual([4]);
    // past the rows kept, each is built (and still reads its row)
    expect(insertedRow(500).compile(open.db).parameters).toEqual([501]);
  });

  it('given two writes of one plugin namespace in one append (its count written twice), when appended, then a transaction, and the rows of a rebuild', async () => {
    const c = {
      name: 'two keys of one namespace',
      given: (ids: Ids) => [[ev.created(ids)], [ev.input(ids, 1)], [ev.started(ids, 1)]],
      when: (ids: Ids) => [
        [ev.written(ids, 1, { key: 'mira', value: 1 }), ev.written(ids, 1, { key: 'tom', value: 2 })],
        [ev.deleted(ids, 1, { key: 'mira' }), ev.deleted(ids, 1, { key: 'tom' })],
      ],
    };
    for (const via of ['append', 'catchingUp'] as const) {
      const { appended, rebuilt, oneStatement } = await runStatementRowsCase(open.db, c, via);
      expect(oneStatement).toEqual([false, false]);
      expect(appended.plugin_data_namespaces).toEqual([expect.objectContaining({ namespace: 'scores', row_count: 0 })]);
      expect(appended).toEqual(rebuilt);
    }
  });

  it('given a projection whose write fails in the statement, when appended, then InlineProjectionFailedError names it and nothing is written', async () => {
    const broken: InlineProjection = {
      name: 'broken',
      handles: ['compaction.barrier-passed@1'],
      tables: ['executions'],
      // no tenant: the not-null constraint of executions refuses it
      sqlFor: (_event, ctx) => ({
        ctes: [{ name: 'w', body: sql`insert into executions (execution_id) select 'x' from ${ctx.row} e` }],
        rows: ['executions:x'],
      }),
      applyBatch: () => Promise.reject(new Error('not applied here')),
    };
    const store = new EventStore(open.db, { inline: [...inlineProjections, broken] });
    const streamId = 'broken-stream';
    await store.append({
      tenantId: 't',
      streamId,
      expectedVersion: 0,
      events: [{ type: 'session.created@1', data: { sessionId: streamId, worldId: null, locale: 'en' } }],
    });
    const barrier = {
      type: 'compaction.barrier-passed@1' as const,
      data: {
        executionId: 'e',
        turnId: 'u',
        attempt: 1,
        pluginId: 'p',
        runtimeId: 'r',
        estimatedTokens: 1,
        triggerWindow: 10,
        thresholdTokens: 5,
        outcome: 'nothing' as const,
      },
    };
    const failure = await store.append({ tenantId: 't', streamId, expectedVersion: 1, events: [barrier] }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(InlineProjectionFailedError);
    expect(failure).toMatchObject({ projection: 'broken', eventType: 'compaction.barrier-passed@1', streamId, tenantId: 't' });
    expect(await store.streamVersion(streamId)).toBe(1);
  });
});
