import fc from 'fast-check';
import type { SelfDataBlock } from '../../context';
import { projectionSpec, uniqueIds } from '../../../test/support/projection-spec';
import { QueryCounter } from '../../../test/support/query-counter';
import type { NewEvent } from '../event-types';
import { PluginDataFold } from '../plugin-data-fold';
import { PluginDataStore } from '../plugin-data-store';
import { pluginDataProjection } from '../projections/plugin-data';
import { rebuildInline } from '../projections/inline/rebuild-inline';

const spec = projectionSpec({ inline: pluginDataProjection });
beforeAll(() => spec.start(), 120_000);
afterAll(() => spec.stop());

const turn = { executionId: 'e-1', turnId: 't-1', attempt: 1 };
const write = (namespace: string, key: string, value: unknown, pluginId = 'p'): NewEvent => ({
  type: 'plugin-data.written@1',
  data: { ...turn, pluginId, namespace, key, value: value as never },
});
const remove = (namespace: string, key: string, pluginId = 'p'): NewEvent => ({ type: 'plugin-data.deleted@1', data: { ...turn, pluginId, namespace, key } });
const keys = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `k${String(i + from).padStart(3, '0')}`);

describe('PluginDataStore (plugin_data reads)', () => {
  it('get and list read one plugin’s namespace: values as written, list in creation order, absent keys undefined', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    await spec.append({
      tenant: t,
      stream: s,
      events: [write('n', 'b', { hp: 3 }), write('n', 'a', 'first a'), write('m', 'a', 'other ns'), write('n', 'c', null)],
    });
    await spec.append({ tenant: t, stream: s, events: [write('n', 'a', ['rewritten']), write('n', 'x', 1, 'other-plugin')] });
    const data = new PluginDataStore(spec.db).scope({ tenantId: t, sessionId: s, pluginId: 'p' });
    expect(await data.get('n', 'a')).toEqual(['rewritten']);
    expect(await data.get('n', 'c')).toBeNull();
    expect(await data.get('n', 'zzz')).toBeUndefined();
    expect(await data.get('n', 'x')).toBeUndefined(); // another plugin's key
    expect(await data.list('n')).toEqual([
      { key: 'b', value: { hp: 3 } },
      { key: 'a', value: ['rewritten'] },
      { key: 'c', value: null },
    ]);
    expect(await data.list('n', { limit: 2 })).toEqual([
      { key: 'b', value: { hp: 3 } },
      { key: 'a', value: ['rewritten'] },
    ]);
    await expect(data.list('n', { limit: 0 })).rejects.toThrow(RangeError);
    await expect(data.list('n', { limit: 1001 })).rejects.toThrow(RangeError);
  });

  it('selfData of a namespace within the limit: every row in creation order, whatever was updated last', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    await spec.append({ tenant: t, stream: s, events: keys(50).map((k) => write('n', k, { k })) });
    await spec.append({ tenant: t, stream: s, events: [write('n', 'k001', 'updated last')] });
    const data = new PluginDataStore(spec.db).scope({ tenantId: t, sessionId: s, pluginId: 'p' });
    const block: SelfDataBlock = await data.selfData('n');
    expect(block.totalRows).toBe(50);
    expect(block.rows.map((r) => r.key)).toEqual(keys(50));
    expect(block.rows[0]).toEqual({ key: 'k001', value: 'updated last' });
    expect(await data.selfData('empty')).toEqual({ namespace: 'empty', rows: [], totalRows: 0 });
  });

  it('selfData beyond the limit: the earliest 25 as anchors, then the 25 most recently updated of the others, all in creation order, with the total', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    await spec.append({ tenant: t, stream: s, events: keys(80).map((k) => write('n', k, k)) });
    // anchors updated (they stay anchors, they take no recent place); then 5 old rows among the others
    await spec.append({ tenant: t, stream: s, events: [write('n', 'k002', 'a'), write('n', 'k010', 'b')] });
    await spec.append({ tenant: t, stream: s, events: ['k030', 'k031', 'k040', 'k041', 'k042'].map((k) => write('n', k, `${k}!`)) });
    await spec.append({ tenant: t, stream: s, events: [remove('n', 'k079')] });
    const data = new PluginDataStore(spec.db).scope({ tenantId: t, sessionId: s, pluginId: 'p' });
    const block = await data.selfData('n');
    expect(block.totalRows).toBe(79);
    // the 5 updated, then the 20 written last of the others (k079 deleted): k060..k078 and k080
    const recent = [...['k030', 'k031', 'k040', 'k041', 'k042'], ...keys(19, 60), 'k080'];
    expect(block.rows.map((r) => r.key)).toEqual([...keys(25), ...recent]);
    expect(block.rows.find((r) => r.key === 'k002')?.value).toBe('a');
    expect(block.rows.find((r) => r.key === 'k040')?.value).toBe('k040!');
  });

  it('an odd limit takes ceil(limit / 2) anchors; a limit of 1 is the earliest row', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    await spec.append({ tenant: t, stream: s, events: keys(10).map((k) => write('n', k, k)) });
    await spec.append({ tenant: t, stream: s, events: [write('n', 'k005', 'x')] });
    const data = new PluginDataStore(spec.db).scope({ tenantId: t, sessionId: s, pluginId: 'p' });
    expect((await data.selfData('n', { limit: 5 })).rows.map((r) => r.key)).toEqual(['k001', 'k002', 'k003', 'k005', 'k010']);
    expect(await data.selfData('n', { limit: 1 })).toEqual({ namespace: 'n', rows: [{ key: 'k001', value: 'k001' }], totalRows: 10 });
    await expect(data.selfData('n', { limit: 0 })).rejects.toThrow(RangeError);
    await expect(data.selfData('n', { limit: 2.5 })).rejects.toThrow(RangeError);
  });

  it('selfData is one statement returning at most `limit` rows, the total counted in SQL', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    // 4 appends of 40: over three times the limit of 50, so a read of every row would show in `rows`
    // (2,000 rows here took 3.6 s and proved no more)
    for (let i = 0; i < 4; i++) await spec.append({ tenant: t, stream: s, events: keys(40, i * 40 + 1).map((k) => write('n', k, { k })) });
    const counter = new QueryCounter();
    const data = new PluginDataStore(spec.db.withPlugin(counter)).scope({ tenantId: t, sessionId: s, pluginId: 'p' });
    const block = await data.selfData('n');
    expect(block.totalRows).toBe(160);
    expect(block.rows).toHaveLength(50);
    expect(counter).toMatchObject({ queries: 1, rows: 50 });
  });

  it('tenant isolation: another tenant reads nothing of a session, even naming its session, plugin, namespace and key', async () => {
    const id = uniqueIds();
    const [a, b, s] = [id('tenant-a'), id('tenant-b'), id('s')];
    await spec.append({ tenant: a, stream: s, events: [write('n', 'secret', 'of tenant a')] });
    const store = new PluginDataStore(spec.db);
    const mine = store.scope({ tenantId: a, sessionId: s, pluginId: 'p' });
    const theirs = store.scope({ tenantId: b, sessionId: s, pluginId: 'p' });
    expect(await mine.get('n', 'secret')).toBe('of tenant a');
    expect(await theirs.get('n', 'secret')).toBeUndefined();
    expect(await theirs.list('n')).toEqual([]);
    expect(await theirs.selfData('n')).toEqual({ namespace: 'n', rows: [], totalRows: 0 });
    // and another plugin of the same tenant reads none of it either
    expect(await store.scope({ tenantId: a, sessionId: s, pluginId: 'q' }).list('n')).toEqual([]);
  });

  it('a rebuild from the log gives the same rows', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const [first] = await spec.append({ tenant: t, stream: s, events: [write('n', 'a', 1), write('n', 'b', 2), write('n', 'c', 3)] });
    await spec.append({ tenant: t, stream: s, events: [remove('n', 'b'), write('n', 'a', { again: true }), write('n', 'b', 'new')] });
    const before = await spec.rows([s]);
    await spec.db.deleteFrom('plugin_data').where('session_id', '=', s).execute();
    // this session's stream, from its first event: not the earlier tests' streams (thousands of rows no assertion reads)
    const rebuilt = await rebuildInline({ db: spec.db, projections: [pluginDataProjection], since: first.globalPosition - 1 });
    expect(rebuilt).toMatchObject({ streams: 1, events: 6, failures: [] });
    expect(await spec.rows([s])).toEqual(before);
  });

  it('property: the store and the in-memory fold of the same events give the same get, list and selfData', async () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('write' as const), key: fc.integer({ min: 1, max: 14 }), value: fc.jsonValue({ maxDepth: 2 }) }),
      fc.record({ kind: fc.constant('delete' as const), key: fc.integer({ min: 1, max: 14 }) }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(op, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 12 }),
        async (batches, limit) => {
          const id = uniqueIds();
          const [t, s] = [id('t'), id('s')];
          for (const batch of batches) {
            const events = batch.map((o) => (o.kind === 'write' ? write('n', `k${o.key}`, o.value) : remove('n', `k${o.key}`)));
            await spec.append({ tenant: t, stream: s, events });
          }
          const fold = new PluginDataFold();
          for (const event of await spec.store.readStream(s)) fold.apply(event);
          const data = new PluginDataStore(spec.db).scope({ tenantId: t, sessionId: s, pluginId: 'p' });
          expect(await data.selfData('n', { limit })).toEqual(fold.selfData('p', 'n', { limit }));
          expect(await data.list('n', { limit })).toEqual(fold.list('p', 'n', { limit }));
          expect(await data.get('n', 'k1')).toEqual(fold.get('p', 'n', 'k1'));
        },
      ),
      // 30 runs of up to 8 batches over 14 keys and limits 1..12 cover within and beyond the limit,
      // anchors and recents (60 took 2.5 s); fast-check prints the seed of a failure to replay it
      { numRuns: 30 },
    );
  }, 120_000);
});
