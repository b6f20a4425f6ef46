import { type CompiledQuery, sql } from 'kysely';
import { pendingSuffixQuery, type TraceColumns, traceInsertQuery } from '../../libs/events';
import { prefixReportsInsertQuery, prefixStateQuery } from '../../libs/reports';
import { explain, planNodes } from '../support/explain';
import { useMigratedDatabase } from '../support/migrated-database';

/** One database for the file, never analyzed: the planner has only its defaults (the bench and CI databases run with autovacuum off). */
const database = useMigratedDatabase();
beforeAll(async () => {
  const { open } = database;
  // one long session whose last input is near its end, and a few short ones
  await sql`
    insert into events (tenant_id, stream_id, stream_version, type, data, metadata)
    select 't', case when g <= 2000 then 'long' else 'short-' || (g % 50) end, g, 'llm.calling@1', '{"body":"{}"}'::jsonb, '{}'::jsonb
    from generate_series(1, 2500) g`.execute(open.db);
  await sql`
    insert into executions (execution_id, tenant_id, session_id, turn_id, status, submitted_version, submitted_at, updated_at)
    values ('x1', 't', 'long', 'u1', 'committed', 1990, now(), now())`.execute(open.db);
  // 3,000 reports of 60 sessions, 10 runtimes each
  await sql`
    insert into prefix_reports (call_id, tenant_id, session_id, turn_id, turn, runtime, position, first_in_turn, protocol, body, request_tokens)
    select 'c' || g, 't', 's' || (g % 60), 'u' || (g / 600), g / 600 + 1, 'p/r' || (g % 10), g, g % 20 < 10, 'openai', '{}', 1
    from generate_series(1, 3000) g`.execute(open.db);
}, 120_000);

/**
 * The async projections find the log row each of their rows is applied from by its position. On a
 * log with no statistics yet (a new database, autovacuum off or not yet run) the planner must still
 * take the primary key, not walk the session's whole stream through the (tenant_id, stream_id)
 * index filtering on the position: that read grows with the session (issue 33).
 */
describe('EXPLAIN: the async projections find a log row by its position, with no statistics', () => {
  /** How the statement's plan reads `events`: each scan's node type and index. */
  const eventsScans = async (query: CompiledQuery) =>
    planNodes(await explain(database.open.db, query))
      .filter((n) => n['Relation Name'] === 'events')
      .map((n) => `${n['Node Type']} ${n['Index Name'] ?? ''}`.trim());

  it('trace_events: each row by the events primary key, never by the (tenant_id, stream_id) index', async () => {
    const { rows } = await sql<{ global_position: string }>`
      select global_position from events where stream_id = 'long' order by stream_version desc limit 2`.execute(database.open.db);
    const positions = rows.map((r) => r.global_position);
    const column = (value: string) => positions.map(() => value);
    const params: TraceColumns = {
      globalPositions: positions,
      tenantIds: column('t'),
      sessionIds: column('long'),
      executionIds: column('e'),
      turnIds: column('u'),
      types: column('llm.calling@1'),
      callIds: column('c'),
      pluginIds: column('narrator'),
      runtimeIds: column('story'),
      recordedAts: column(new Date(0).toISOString()),
    };
    expect(await eventsScans(traceInsertQuery(database.open.db, params).compile())).toEqual(['Index Scan events_pkey']);
  });

  it("prefix_reports: each new row's body by the events primary key, never by the (tenant_id, stream_id) index", async () => {
    const { rows } = await sql<{ global_position: string }>`
      select global_position from events where stream_id = 'long' order by stream_version desc limit 2`.execute(database.open.db);
    const inserts = rows.map((r, i) => ({
      call_id: `c${i}`,
      tenant_id: 't',
      session_id: 'long',
      turn_id: `u${i}`,
      turn: i + 1,
      runtime: 'narrator/story',
      position: r.global_position,
      first_in_turn: true,
      protocol: 'openai',
      layout: null,
      request_tokens: 1,
      model: 'm',
    }));
    expect(await eventsScans(prefixReportsInsertQuery(inserts).compile(database.open.db))).toEqual(['Index Scan events_pkey']);
  });
});

/**
 * The reads of every turn, on tables with no statistics (the bench and CI databases: autovacuum
 * off): a session's pending suffix is read by (stream_id, stream_version), not through the
 * (tenant_id, stream_id) index that reads the whole stream; the prefix-report state reads
 * prefix_reports by its session indexes, never the whole table (issue 33).
 */
describe('EXPLAIN: the per-turn reads take their session indexes, with no statistics', () => {
  /** Every scan of the plan: `Seq Scan <relation>`, or the index it reads. */
  const scans = async (query: CompiledQuery, generic = false) =>
    planNodes(await explain(database.open.db, query, { generic })).flatMap((n) =>
      n['Node Type'] === 'Seq Scan' ? [`Seq Scan ${n['Relation Name']}`] : n['Index Name'] ? [n['Index Name']] : [],
    );

  it.each([
    ['for its parameters', false],
    ['generic (a prepared statement after its first runs)', true],
  ])(
    "the pending suffix by the stream's (stream_id, stream_version) index, the last preference change before it by its partial index (%s)",
    async (_plan, generic) => {
      const query = pendingSuffixQuery('t', 'long', { lastBefore: 'session.preferences-changed@1', alongside: sql`null` }).compile(database.open.db);
      const read = (await scans(query, generic)).filter((s) => s.startsWith('events') || s.endsWith(' events'));
      expect(read).toEqual(['events_stream_version_unique', 'events_stream_preferences']);
    },
  );

  it.each([
    ['for its parameters', false],
    ['generic (a prepared statement after its first runs)', true],
  ])('the prefix-report state of a batch: each part by an index on the session, never the whole table (%s)', async (_plan, generic) => {
    const runtimes = Array.from({ length: 9 }, (_, i) => `p/r${i}`);
    const calls = runtimes.map((runtime, i) => ({ tenantId: 't', sessionId: 's7', turnId: 'u9', runtime, callId: `new${i}` }));
    const regenerated = { tenantId: 't', sessionId: 's8', turnId: 'u9b', runtime: 'p/r8', callId: 'new-r', retryFromTurnId: 'u2' };
    const known = [{ tenantId: 't', sessionId: 's7', runtime: 'p/r1', callId: 'c2941', position: 2941, bodyMd5: '' }];
    const read = (await scans(prefixStateQuery([...calls, regenerated], known).compile(database.open.db), generic)).filter((s) => s.includes('prefix_reports'));
    expect(read.filter((s) => s.startsWith('Seq Scan'))).toEqual([]);
    expect(new Set(read)).toEqual(new Set(['prefix_reports_session', 'prefix_reports_runtime_first', 'prefix_reports_pkey']));
  });
});
