import { sql } from 'kysely';
import { storePluginData } from '../../libs/engine/plugin-host/store-plugin-data';
import { migrateToLatest, openDatabase, type OpenDatabase, PluginDataStore } from '../../libs/events';
import { QueryCounter } from '../support/query-counter';
import { createTestDatabase } from '../support/stack';

/**
 * Issue 33: `get`s asked together (a handler's `Promise.all` over its keys, as affinity's segment
 * reads one key per tracked character) are one statement per namespace on the real PostgreSQL, each
 * caller given its own key's value, tenant-scoped; a lone `get` stays the one-key statement.
 */
describe('plugin data gets asked together (real PostgreSQL)', () => {
  let database: { url: string; drop(): Promise<void> };
  let open: OpenDatabase;
  const scope = { tenantId: 'tenant-a', sessionId: 'session-1', pluginId: 'affinity' };
  const keys = ['mira', 'Ōkami 狼', '👨‍👩‍👧 family', 'tom'];

  beforeAll(async () => {
    database = await createTestDatabase();
    open = await openDatabase({ kind: 'postgres', url: database.url });
    await migrateToLatest(open.db);
    await sql`
      insert into plugin_data (tenant_id, session_id, plugin_id, namespace, key, value, created_position, updated_position)
      values ('tenant-a', 'session-1', 'affinity', 'affinity', 'mira', '{"score": 3}', 1, 1),
             ('tenant-a', 'session-1', 'affinity', 'affinity', 'Ōkami 狼', '{"score": -2, "feeling": "wary ☂"}', 2, 2),
             ('tenant-a', 'session-1', 'affinity', 'affinity', '👨‍👩‍👧 family', '"😀"', 3, 3),
             ('tenant-a', 'session-1', 'affinity', 'notes', 'mira', '"a note"', 4, 4),
             ('tenant-b', 'session-1', 'affinity', 'affinity', 'tom', '{"score": 99}', 5, 5)`.execute(open.db);
  });
  afterAll(async () => {
    await open.close();
    await database.drop();
  });

  it('four gets of one namespace at once: one statement, each its own value (a missing key: none), another tenant’s row not seen', async () => {
    const counter = new QueryCounter();
    const reader = new PluginDataStore(open.db.withPlugin(counter)).scope(scope);
    const values = await Promise.all(keys.map((key) => reader.get('affinity', key)));
    expect(values).toEqual([{ score: 3 }, { score: -2, feeling: 'wary ☂' }, '😀', undefined]);
    expect(counter.queries).toBe(1);
  });

  it('gets of two namespaces at once (a key asked twice among them): one statement per namespace', async () => {
    const counter = new QueryCounter();
    const reader = new PluginDataStore(open.db.withPlugin(counter)).scope(scope);
    const values = await Promise.all([
      reader.get('affinity', 'mira'),
      reader.get('notes', 'mira'),
      reader.get('affinity', 'mira'),
      reader.get('affinity', 'tom'),
    ]);
    expect(values).toEqual([{ score: 3 }, 'a note', { score: 3 }, undefined]);
    expect(counter.queries).toBe(2);
  });

  it('a handler’s ctx.pluginData: the same, a missing key null; gets one after the other: one statement each, as before', async () => {
    const counter = new QueryCounter();
    const reader = storePluginData(new PluginDataStore(open.db.withPlugin(counter))).reader(scope);
    expect(await Promise.all(keys.map((key) => reader.get('affinity', key)))).toEqual([{ score: 3 }, { score: -2, feeling: 'wary ☂' }, '😀', null]);
    expect(counter.queries).toBe(1);
    expect(await reader.get('affinity', 'mira')).toEqual({ score: 3 });
    expect(await reader.get('affinity', 'tom')).toBeNull();
    expect(counter.queries).toBe(3);
    // tenant B names the same session and plugin: only its own row
    const asB = storePluginData(new PluginDataStore(open.db)).reader({ ...scope, tenantId: 'tenant-b' });
    expect(await Promise.all(keys.map((key) => asB.get('affinity', key)))).toEqual([null, null, null, { score: 99 }]);
  });

  it('a read that fails fails every get it carried', async () => {
    const failing = new PluginDataStore(open.db).scope({ ...scope, sessionId: 'x'.repeat(10) });
    // a key PostgreSQL cannot take (a NUL character) fails the one statement both gets are in
    const asked = [failing.get('affinity', 'mira'), failing.get('affinity', 'bad\u0000key')];
    const settled = await Promise.allSettled(asked);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
  });
});
