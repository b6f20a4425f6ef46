import { type CompiledQuery, sql } from 'kysely';
import { migrateToLatest, openDatabase, type OpenDatabase, type TraceColumns, traceInsertQuery } from '../../libs/events';
import { prefixReportsInsertQuery } from '../../libs/reports';
import { explain, planNodes } from '../support/explain';
import { createTestDatabase } from '../support/stack';

/**
 * The async projections find the log row each of their rows is applied from by its position. On a
 * log with no statistics yet (a new database, autovacuum off or not yet run) the planner must still
 * take the primary key, not walk the session's whole stream through the (tenant_id, stream_id)
 * index filtering on the position: that read grows with the session (issue 33).
 */
describe('EXPLAIN: the async projections find a log row by its position, with no statistics', () => {
  let database: { url: string; drop(): Promise<void> };
  let open: OpenDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    open = await openDatabase({ kind: 'postgres', url: database.url, poolSize: 2 });
    await migrateToLatest(open.db);
    // one long session and a few short ones; no analyze: the planner has only its defaults
    await sql`
      insert into events (tenant_id, stream_id, stream_version, type, data, metadata)
      select 't', case when g <= 2000 then 'long' else 'short-' || (g % 50) end, g, 'llm.calling@1', '{"body":"{}"}'::jsonb, '{}'::jsonb
      from generate_series(1, 2500) g`.execute(open.db);
  }, 120_000);
  afterAll(async () => {
    await open.close();
    await database.drop();
  });

  /** How the statement's plan reads `events`: each scan's node type and index. */
  const eventsScans = async (query: CompiledQuery) =>
    planNodes(await explain(open.db, query))
      .filter((n) => n['Relation Name'] === 'events')
      .map((n) => `${n['Node Type']} ${n['Index Name'] ?? ''}`.trim());

  it('trace_events: each row by the events primary key, never by the (tenant_id, stream_id) index', async () => {
    const { rows } = await sql<{ global_position: string }>`
      select global_position from events where stream_id = 'long' order by stream_version desc limit 2`.execute(open.db);
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
    expect(await eventsScans(traceInsertQuery(open.db, params).compile())).toEqual(['Index Scan events_pkey']);
  });

  it("prefix_reports: each new row's body by the events primary key, never by the (tenant_id, stream_id) index", async () => {
    const { rows } = await sql<{ global_position: string }>`
      select global_position from events where stream_id = 'long' order by stream_version desc limit 2`.execute(open.db);
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
    expect(await eventsScans(prefixReportsInsertQuery(inserts).compile(open.db))).toEqual(['Index Scan events_pkey']);
  });
});
