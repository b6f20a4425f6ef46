import { sql } from 'kysely';
import { pluginDataAt } from '../../libs/engine/plugin-host/journal-plugin-data';
import { PluginDataRaceError } from '../../libs/engine/plugin-host/plugin-data-errors';
import { storePluginData } from '../../libs/engine/plugin-host/store-plugin-data';
import { readSelfData, selfDataUnchanged } from '../../libs/engine/request/self-data';
import { migrateToLatest, openDatabase, type OpenDatabase, PluginDataStore } from '../../libs/events';
import { QueryCounter } from '../support/query-counter';
import { createTestDatabase } from '../support/stack';

/**
 * Issue 33: the runs of one turn job share its journal (the turn step and the runtimes of a stage,
 * run inline), and their hooks, tools and `io.selfData` read the same plugin data again and again.
 * Seen through the journal (`pluginDataAt`), a read at the same plugin-data version is one statement
 * on the real PostgreSQL; a write the journal takes in (a sibling's append) moves the version and the
 * next read sees it; another tenant gets nothing; a write of another process the journal has not
 * caught up with is still caught by the selfData race check at the append.
 */
describe('plugin data read through a turn job’s journal (real PostgreSQL)', () => {
  let database: { url: string; drop(): Promise<void> };
  let open: OpenDatabase;
  const scope = { tenantId: 'tenant-a', sessionId: 'session-1', pluginId: 'affinity' };
  let position = 0;

  // the rows the inline projection keeps (as a plugin-data.written@1 append stores them)
  const write = async (tenantId: string, key: string, value: unknown) => {
    position++;
    const at = sql`tenant_id = ${tenantId} and session_id = 'session-1' and plugin_id = 'affinity' and namespace = 'affinity'`;
    await sql`delete from plugin_data where ${at} and key = ${key}`.execute(open.db);
    await sql`
      insert into plugin_data (tenant_id, session_id, plugin_id, namespace, key, value, created_position, updated_position)
      values (${tenantId}, 'session-1', 'affinity', 'affinity', ${key}, ${JSON.stringify(value)}::jsonb, ${position}, ${position})`.execute(open.db);
    await sql`delete from plugin_data_namespaces where ${at}`.execute(open.db);
    await sql`
      insert into plugin_data_namespaces (tenant_id, session_id, plugin_id, namespace, row_count)
      values (${tenantId}, 'session-1', 'affinity', 'affinity', (select count(*) from plugin_data where ${at}))`.execute(open.db);
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    open = await openDatabase({ kind: 'postgres', url: database.url });
    await migrateToLatest(open.db);
    await write('tenant-a', 'mira', { score: 3 });
    await write('tenant-a', 'Ōkami 狼', { score: -2, feeling: 'wary ☂' });
  });
  afterAll(async () => {
    await open.close();
    await database.drop();
  });

  it('two runs of a stage reading at the same version: one statement for all their reads (the session’s snapshot), not one per read and run; the store alone: one per run', async () => {
    const counter = new QueryCounter();
    const store = new PluginDataStore(open.db.withPlugin(counter));
    // as before: each run's hooks read through a reader of their own, each a statement
    const plain = [storePluginData(store).reader(scope), storePluginData(store).reader(scope)];
    for (const reader of plain) expect(await reader.get('affinity', 'mira')).toEqual({ score: 3 });
    expect(counter.queries).toBe(2);
    counter.queries = 0;
    const journal = { pluginDataVersion: 7 };
    // two runtimes of one stage: their hooks' gets, a list and the selfData read, one after the other
    for (const run of [pluginDataAt(store, journal), pluginDataAt(store, journal)]) {
      const hooks = storePluginData(run).reader(scope);
      expect(await hooks.get('affinity', 'mira')).toEqual({ score: 3 });
      expect(await hooks.get('affinity', 'nobody')).toBeNull();
      expect((await hooks.list('affinity')).map((r) => r.key)).toEqual(['mira', 'Ōkami 狼']);
      const [self] = await readSelfData(run, scope, [{ namespace: 'affinity' }]);
      expect(self).toMatchObject({ namespace: 'affinity', totalRows: 2 });
    }
    expect(counter.queries).toBe(1);
  });

  it('a stage of several plugins (hooks’ gets, a list, io.selfData): one statement for all of them, each its own plugin’s rows; another tenant naming the session sees none', async () => {
    const row = (tenantId: string, pluginId: string, namespace: string, key: string, value: unknown) =>
      sql`
        insert into plugin_data (tenant_id, session_id, plugin_id, namespace, key, value, created_position, updated_position)
        values (${tenantId}, 'session-stage', ${pluginId}, ${namespace}, ${key}, ${JSON.stringify(value)}::jsonb, ${++position}, ${position})`.execute(open.db);
    const count = (tenantId: string, pluginId: string, namespace: string, rows: number) =>
      sql`insert into plugin_data_namespaces (tenant_id, session_id, plugin_id, namespace, row_count) values (${tenantId}, 'session-stage', ${pluginId}, ${namespace}, ${rows})`.execute(
        open.db,
      );
    await row('tenant-a', 'world-time', 'clock', 'now', { day: 3 });
    await row('tenant-a', 'memory', 'blocks', 'courier-notes', 'the tide turns at dusk ☾');
    await row('tenant-a', 'memory', 'blocks', 'village-rumours', 'Ōkami 狼');
    await row('tenant-a', 'codex', 'entries', 'ferry', { text: 'a raft' });
    await count('tenant-a', 'world-time', 'clock', 1);
    await count('tenant-a', 'memory', 'blocks', 2);
    await count('tenant-a', 'codex', 'entries', 1);
    const counter = new QueryCounter();
    const store = new PluginDataStore(open.db.withPlugin(counter));
    const journal = { pluginDataVersion: 60 };
    const at = (tenantId: string, pluginId: string) => ({ tenantId, sessionId: 'session-stage', pluginId });
    // the stage's runs, as their handlers and runtimes read, each through the journal
    const run = () => pluginDataAt(store, journal);
    const [clock, courier, rumours, codex, self, missing] = await Promise.all([
      storePluginData(run()).reader(at('tenant-a', 'world-time')).get('clock', 'now'),
      storePluginData(run()).reader(at('tenant-a', 'memory')).get('blocks', 'courier-notes'),
      storePluginData(run()).reader(at('tenant-a', 'memory')).get('blocks', 'village-rumours'),
      storePluginData(run()).reader(at('tenant-a', 'codex')).list('entries', { limit: 1000 }),
      readSelfData(run(), at('tenant-a', 'memory'), [{ namespace: 'blocks', limit: 1 }]),
      storePluginData(run()).reader(at('tenant-a', 'affinity')).get('scores', 'mira'),
    ]);
    expect(counter.queries).toBe(1);
    expect(clock).toEqual({ day: 3 });
    expect([courier, rumours]).toEqual(['the tide turns at dusk ☾', 'Ōkami 狼']);
    expect(codex).toEqual([{ key: 'ferry', value: { text: 'a raft' } }]);
    expect(self).toEqual([{ namespace: 'blocks', rows: [{ key: 'courier-notes', value: 'the tide turns at dusk ☾' }], totalRows: 2 }]);
    expect(missing).toBeNull();
    // a plugin reads only its own namespace: world-time asking memory's key gets nothing
    expect(await storePluginData(run()).reader(at('tenant-a', 'world-time')).get('blocks', 'courier-notes')).toBeNull();
    // tenant B, naming A's session and plugins at the same version: nothing
    expect(await storePluginData(run()).reader(at('tenant-b', 'memory')).list('blocks')).toEqual([]);
    expect(await storePluginData(run()).reader(at('tenant-b', 'world-time')).get('clock', 'now')).toBeNull();
    expect(counter.queries).toBe(2);

    // a session beyond the snapshot's bounds: the namespaces it holds whole from it, the others one statement each, as before
    counter.queries = 0;
    const bounded = new PluginDataStore(open.db.withPlugin(counter), { rows: 2, bytes: 1 << 20, perNamespace: 10 });
    const small = pluginDataAt(bounded, { pluginDataVersion: 61 });
    expect(await small.scope(at('tenant-a', 'codex')).list('entries')).toEqual([{ key: 'ferry', value: { text: 'a raft' } }]);
    expect(counter.queries).toBe(1);
    expect(await small.scope(at('tenant-a', 'memory')).get('blocks', 'village-rumours')).toBe('Ōkami 狼');
    expect(await small.scope(at('tenant-a', 'world-time')).get('clock', 'now')).toEqual({ day: 3 });
    expect(counter.queries).toBe(3);
  });

  it('journals of one process at the same plugin-data version (a turn job’s, then its runtime job’s, loaded anew) share one snapshot; at version 0 each journal reads its own', async () => {
    const counter = new QueryCounter();
    const store = new PluginDataStore(open.db.withPlugin(counter));
    const turnJob = { pluginDataVersion: 70 };
    const runtimeJob = { pluginDataVersion: 70 };
    expect(await pluginDataAt(store, turnJob).scope(scope).get('affinity', 'mira')).toEqual({ score: 3 });
    expect((await pluginDataAt(store, runtimeJob).scope(scope).list('affinity')).map((r) => r.key)).toEqual(['mira', 'Ōkami 狼']);
    expect(counter.queries).toBe(1);
    // another tenant at the same version: a snapshot of its own, none of A's rows
    expect(
      await pluginDataAt(store, runtimeJob)
        .scope({ ...scope, tenantId: 'tenant-b' })
        .get('affinity', 'mira'),
    ).toBeUndefined();
    expect(counter.queries).toBe(2);
    // version 0 (no plugin-data event in a suffix journal): not shared
    for (const journal of [{ pluginDataVersion: 0 }, { pluginDataVersion: 0 }])
      expect(await pluginDataAt(store, journal).scope(scope).get('affinity', 'mira')).toEqual({ score: 3 });
    expect(counter.queries).toBe(4);
  });

  it('a sibling’s write moves the journal’s version: the next read in the turn sees it', async () => {
    const counter = new QueryCounter();
    const store = new PluginDataStore(open.db.withPlugin(counter));
    const journal = { pluginDataVersion: 10 };
    const reader = pluginDataAt(store, journal).scope(scope);
    expect(await reader.get('affinity', 'mira')).toEqual({ score: 3 });
    // the sibling's append stored the row, then the journal took its event in
    await write('tenant-a', 'mira', { score: 4 });
    journal.pluginDataVersion = 12;
    expect(await reader.get('affinity', 'mira')).toEqual({ score: 4 });
    expect(await pluginDataAt(store, journal).scope(scope).get('affinity', 'mira')).toEqual({ score: 4 });
    expect((await reader.selfData('affinity')).rows.find((r) => r.key === 'mira')?.value).toEqual({ score: 4 });
    // one snapshot at version 10, one at 12
    expect(counter.queries).toBe(2);
  });

  it('another tenant naming the same session and plugin gets nothing, even after tenant A’s reads at the same version', async () => {
    const journal = { pluginDataVersion: 20 };
    const store = new PluginDataStore(open.db);
    expect(await pluginDataAt(store, journal).scope(scope).get('affinity', 'Ōkami 狼')).toEqual({ score: -2, feeling: 'wary ☂' });
    const asB = storePluginData(pluginDataAt(store, journal)).reader({ ...scope, tenantId: 'tenant-b' });
    expect(await asB.get('affinity', 'Ōkami 狼')).toBeNull();
    expect(await asB.list('affinity')).toEqual([]);
  });

  it('each caller gets its own copy: a plugin changing what it read changes no other read', async () => {
    const journal = { pluginDataVersion: 30 };
    const reader = pluginDataAt(new PluginDataStore(open.db), journal).scope(scope);
    const first = (await reader.get('affinity', 'Ōkami 狼')) as { score: number };
    first.score = 1000;
    expect(await reader.get('affinity', 'Ōkami 狼')).toEqual({ score: -2, feeling: 'wary ☂' });
  });

  it('a write of another process the journal has not caught up with: the selfData race check still fails the call', async () => {
    const journal = { pluginDataVersion: 40 };
    const store = new PluginDataStore(open.db);
    const job = { executionId: 'e1', pluginId: 'affinity', runtimeId: 'tracker' };
    // a sibling read first, at version 40
    await readSelfData(pluginDataAt(store, journal), scope, [{ namespace: 'affinity' }]);
    // another process writes; this run reads (answered at version 40), then its append catches up
    await write('tenant-a', 'tom', { score: 1 });
    const dataVersion = journal.pluginDataVersion;
    const [self] = await readSelfData(pluginDataAt(store, journal), scope, [{ namespace: 'affinity' }]);
    expect(self.rows.map((r) => r.key)).not.toContain('tom');
    journal.pluginDataVersion = 41;
    expect(() => selfDataUnchanged(journal, { job, read: true, dataVersion })).toThrow(PluginDataRaceError);
    // the run again (PluginDataRaceError: read anew): the row is there
    const [again] = await readSelfData(pluginDataAt(store, journal), scope, [{ namespace: 'affinity' }]);
    expect(again.rows.map((r) => r.key)).toContain('tom');
  });

  it('a failed read is not kept: asked again, it goes to the store again', async () => {
    const journal = { pluginDataVersion: 50 };
    const store = new PluginDataStore(open.db);
    let failures = 1;
    // the session's read fails once (a dropped connection), then the store answers
    const flaky = {
      scope: (s: typeof scope) => store.scope(s),
      session: (s: { tenantId: string; sessionId: string }) => (failures-- > 0 ? Promise.reject(new Error('connection lost')) : store.session(s)),
    };
    const reader = pluginDataAt(flaky, journal).scope(scope);
    await expect(reader.get('affinity', 'mira')).rejects.toThrow('connection lost');
    await expect(reader.list('affinity', { limit: 0 })).rejects.toThrow(RangeError);
    expect(await reader.get('affinity', 'mira')).toEqual({ score: 4 });
  });
});
