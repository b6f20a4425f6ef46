import { sql } from 'kysely';
import {
  migrateToLatest,
  openDatabase,
  type OpenDatabase,
  PluginDataStore,
  readSessionPluginData,
  SESSION_PLUGIN_DATA_BOUNDS,
  selfDataQuery,
  sessionPluginDataQuery,
} from '../../libs/events';
import { explain, planNodes } from '../support/explain';
import { QueryCounter } from '../support/query-counter';
import { createTestDatabase } from '../support/stack';

/**
 * Spec §4 "io.selfData takes only a limited number of rows", on the real PostgreSQL: a namespace
 * of 100,000 rows is asked for its bounded projection and is never read whole.
 */
describe('plugin data on PostgreSQL: the bounded selfData read of a 100,000-row namespace', () => {
  let database: { url: string; drop(): Promise<void> };
  let open: OpenDatabase;
  const scope = { tenantId: 'tenant-a', sessionId: 'session-1', pluginId: 'tracker' };
  const ROWS = 100_000;

  beforeAll(async () => {
    database = await createTestDatabase();
    open = await openDatabase({ kind: 'postgres', url: database.url });
    await migrateToLatest(open.db);
    // the namespace: row g created at stream version g; then rows 500, 40,000 and 99,000 and the
    // anchor 3 rewritten (recency 100,001..100,004, in that order)
    await sql`
      insert into plugin_data (tenant_id, session_id, plugin_id, namespace, key, value, created_position, updated_position)
      select 'tenant-a', 'session-1', 'tracker', 'facts', 'k' || g, jsonb_build_object('n', g), g,
        case g when 500 then 100001 when 40000 then 100002 when 99000 then 100003 when 3 then 100004 else g end
      from generate_series(1, ${ROWS}) g`.execute(open.db);
    // the same names elsewhere: another namespace, plugin, session, and tenant B's own session
    await sql`
      insert into plugin_data (tenant_id, session_id, plugin_id, namespace, key, value, created_position, updated_position)
      select t, s, p, n, 'k' || g, '"noise"'::jsonb, g, g
      from (values ('tenant-a', 'session-1', 'tracker', 'other'), ('tenant-a', 'session-1', 'other', 'facts'),
                   ('tenant-a', 'session-2', 'tracker', 'facts'), ('tenant-b', 'session-b', 'tracker', 'facts')) as x(t, s, p, n),
           generate_series(1, 20000) g`.execute(open.db);
    // the projection keeps each namespace's count; rows inserted here are counted here
    await sql`
      insert into plugin_data_namespaces (tenant_id, session_id, plugin_id, namespace, row_count)
      select tenant_id, session_id, plugin_id, namespace, count(*) from plugin_data group by 1, 2, 3, 4`.execute(open.db);
    // and the namespaces of 20,000 other sessions
    await sql`
      insert into plugin_data_namespaces (tenant_id, session_id, plugin_id, namespace, row_count)
      select 'tenant-a', 'session-x' || g, 'tracker', 'facts', 1 from generate_series(1, 20000) g`.execute(open.db);
    await sql`vacuum analyze plugin_data`.execute(open.db);
    await sql`vacuum analyze plugin_data_namespaces`.execute(open.db);
  }, 300_000);
  afterAll(async () => {
    await open.close();
    await database.drop();
  });

  it('returns the earliest 25 and the 25 most recently updated others, in creation order, from one statement of 50 rows with the total', async () => {
    const counter = new QueryCounter();
    const block = await new PluginDataStore(open.db.withPlugin(counter)).scope(scope).selfData('facts');
    expect(counter).toEqual(expect.objectContaining({ queries: 1, rows: 50 }));
    expect(block.totalRows).toBe(ROWS);
    const anchors = Array.from({ length: 25 }, (_, i) => `k${i + 1}`);
    // rewritten k500, k40000, k99000, then the 22 written last (k99978..k100000 but k99000 already in)
    const latest = Array.from({ length: 22 }, (_, i) => `k${ROWS - 21 + i}`);
    expect(block.rows.map((r) => r.key)).toEqual([...anchors, 'k500', 'k40000', 'k99000', ...latest]);
    expect(block.rows[0]).toEqual({ key: 'k1', value: { n: 1 } });
  });

  it('EXPLAIN ANALYZE: both ranges and the total come from their indexes, no sequential scan, and no more rows fetched than the limit allows', async () => {
    const plan = await explain(open.db, selfDataQuery(scope, 'facts', 50).compile(open.db), { analyze: true });
    const nodes = planNodes(plan);
    expect(nodes.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
    // both ranges are walked in index order (no bitmap, no sort of the namespace); the total is one key
    const ranges = nodes.filter((n) => n['Relation Name'] === 'plugin_data').map((n) => [n['Node Type'], n['Index Name']]);
    expect(ranges.sort()).toEqual([
      ['Index Scan', 'plugin_data_created'],
      ['Index Scan', 'plugin_data_updated'],
    ]);
    expect(nodes.filter((n) => n['Relation Name'] === 'plugin_data_namespaces' || n['Index Name'] === 'plugin_data_namespaces_pkey')).not.toEqual([]);
    // rows read from the tables, kept or filtered out: the total's one, the anchors, the recent ones
    // and the anchors the recent scan skips (here k3, rewritten last): 52 of the namespace's 100,000
    const read = nodes
      .filter((n) => n['Relation Name'] !== undefined)
      .reduce((sum, n) => sum + (n['Actual Rows'] + (n['Rows Removed by Filter'] ?? 0)) * (n['Actual Loops'] ?? 1), 0);
    expect(read).toBe(52);
  });

  it('the session’s snapshot (issue 33): its large namespaces are not read, one row each in their place, from the indexes; tenant B naming the session gets none', async () => {
    const explained = async (sessionId: string, tenantId = 'tenant-a') =>
      planNodes(await explain(open.db, sessionPluginDataQuery({ tenantId, sessionId }, SESSION_PLUGIN_DATA_BOUNDS).compile(open.db), { analyze: true }));
    // session-1: three namespaces of 20,000 rows or more, none read
    const nodes = await explained('session-1');
    expect(nodes.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
    const read = nodes
      .filter((n) => n['Relation Name'] !== undefined)
      .reduce((sum, n) => sum + (n['Actual Rows'] + (n['Rows Removed by Filter'] ?? 0)) * (n['Actual Loops'] ?? 1), 0);
    expect(read).toBe(3);
    const snapshot = await readSessionPluginData(open.db, { tenantId: 'tenant-a', sessionId: 'session-1' });
    expect(snapshot.covers('tracker', 'facts')).toBe(false);
    expect(snapshot.covers('tracker', 'other')).toBe(false);
    expect(snapshot.covers('other', 'facts')).toBe(false);
    // a session of small namespaces: its rows through plugin_data_created, no more than it holds
    await sql`
      insert into plugin_data (tenant_id, session_id, plugin_id, namespace, key, value, created_position, updated_position)
      select 'tenant-a', 'session-small', p, 'n', 'k' || g, jsonb_build_object('n', g), g, g
      from (values ('memory'), ('world-time')) as x(p), generate_series(1, 3) g`.execute(open.db);
    await sql`
      insert into plugin_data_namespaces (tenant_id, session_id, plugin_id, namespace, row_count)
      values ('tenant-a', 'session-small', 'memory', 'n', 3), ('tenant-a', 'session-small', 'world-time', 'n', 3)`.execute(open.db);
    const small = await explained('session-small');
    expect(small.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
    expect(
      small.filter((n) => n['Relation Name'] === 'plugin_data').map((n) => [n['Node Type'], n['Index Name'], n['Actual Rows'] * (n['Actual Loops'] ?? 1)]),
    ).toEqual([['Index Scan', 'plugin_data_created', 6]]);
    const whole = await readSessionPluginData(open.db, { tenantId: 'tenant-a', sessionId: 'session-small' });
    expect(whole.list('world-time', 'n').map((r) => r.key)).toEqual(['k1', 'k2', 'k3']);
    expect(whole.get('memory', 'n', 'k2')).toEqual({ n: 2 });
    // tenant B naming A's sessions: nothing, and nothing read of A's rows
    const asB = await readSessionPluginData(open.db, { tenantId: 'tenant-b', sessionId: 'session-small' });
    expect(asB.list('world-time', 'n')).toEqual([]);
    expect(asB.get('memory', 'n', 'k2')).toBeUndefined();
  });

  it('tenant B reads none of tenant A’s rows, even naming A’s session, plugin and namespace', async () => {
    const store = new PluginDataStore(open.db);
    const asB = store.scope({ ...scope, tenantId: 'tenant-b' });
    expect(await asB.get('facts', 'k1')).toBeUndefined();
    expect(await asB.list('facts')).toEqual([]);
    expect(await asB.selfData('facts')).toEqual({ namespace: 'facts', rows: [], totalRows: 0 });
    // B's own session holds rows of the same names: B reads those, 20,000 of them
    expect((await store.scope({ tenantId: 'tenant-b', sessionId: 'session-b', pluginId: 'tracker' }).selfData('facts')).totalRows).toBe(20_000);
  });
});
