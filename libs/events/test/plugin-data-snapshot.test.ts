import fc from 'fast-check';
import { projectionSpec, uniqueIds } from '../../../test/support/projection-spec';
import { QueryCounter } from '../../../test/support/query-counter';
import type { NewEvent } from '../event-types';
import { sql } from 'kysely';
import { readSessionPluginData, sessionPluginDataJson, sessionPluginDataOf } from '../plugin-data-snapshot';
import { PluginDataStore } from '../plugin-data-store';
import { pluginDataProjection } from '../projections/plugin-data';

const spec = projectionSpec({ inline: pluginDataProjection });
beforeAll(() => spec.start(), 120_000);
afterAll(() => spec.stop());

const turn = { executionId: 'e-1', turnId: 't-1', attempt: 1 };
const write = (pluginId: string, namespace: string, key: string, value: unknown): NewEvent => ({
  type: 'plugin-data.written@1',
  data: { ...turn, pluginId, namespace, key, value: value as never },
});
const remove = (pluginId: string, namespace: string, key: string): NewEvent => ({ type: 'plugin-data.deleted@1', data: { ...turn, pluginId, namespace, key } });
const huge = { rows: 1000, bytes: 64 * 1024 * 1024, perNamespace: 1000 };

describe('readSessionPluginData (a session’s plugin data in one statement)', () => {
  it('one statement for every plugin’s namespaces of the session; each read as the store answers it; a namespace with no row is empty', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    await spec.append({
      tenant: t,
      stream: s,
      events: [write('affinity', 'scores', 'mira', 3), write('memory', 'blocks', 'notes', { text: 'Ōkami 狼 ☂' }), write('affinity', 'scores', 'tomas', -1)],
    });
    await spec.append({ tenant: t, stream: s, events: [write('affinity', 'scores', 'mira', 4), remove('affinity', 'scores', 'tomas')] });
    const counter = new QueryCounter();
    const snapshot = await readSessionPluginData(spec.db.withPlugin(counter), { tenantId: t, sessionId: s }, huge);
    expect(counter.queries).toBe(1);
    expect(snapshot.covers('world-time', 'clock')).toBe(true);
    expect(snapshot.get('world-time', 'clock', 'now')).toBeUndefined();
    expect(snapshot.get('affinity', 'scores', 'mira')).toBe(4);
    expect(snapshot.get('affinity', 'scores', 'tomas')).toBeUndefined();
    expect(snapshot.list('memory', 'blocks')).toEqual([{ key: 'notes', value: { text: 'Ōkami 狼 ☂' } }]);
    // a plugin reads only its own rows
    expect(snapshot.get('memory', 'scores', 'mira')).toBeUndefined();
    expect(snapshot.selfData('affinity', 'scores')).toEqual({ namespace: 'scores', rows: [{ key: 'mira', value: 4 }], totalRows: 1 });
  });

  it('tenant isolation: another tenant naming the same session reads only its own rows', async () => {
    const id = uniqueIds();
    const s = id('s');
    await spec.append({ tenant: 'tenant-a', stream: s, events: [write('affinity', 'scores', 'mira', 'a’s')] });
    await spec.append({ tenant: 'tenant-b', stream: `${s}-b`, events: [write('affinity', 'scores', 'other', 'b’s')] });
    const a = await readSessionPluginData(spec.db, { tenantId: 'tenant-a', sessionId: s }, huge);
    const b = await readSessionPluginData(spec.db, { tenantId: 'tenant-b', sessionId: s }, huge);
    expect(a.get('affinity', 'scores', 'mira')).toBe('a’s');
    expect(b.covers('affinity', 'scores')).toBe(true);
    expect(b.get('affinity', 'scores', 'mira')).toBeUndefined();
    expect(b.list('affinity', 'scores')).toEqual([]);
    const store = new PluginDataStore(spec.db);
    expect((await store.session({ tenantId: 'tenant-b', sessionId: s })).get('affinity', 'scores', 'mira')).toBeUndefined();
  });

  it('bounded: at most rows + 1 rows come back; the namespace the row bound cuts and those after it are not held, those before it are', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const keys = (n: number) => Array.from({ length: n }, (_, i) => `k${i}`);
    await spec.append({
      tenant: t,
      stream: s,
      events: [...keys(3).map((k) => write('a', 'n', k, k)), ...keys(5).map((k) => write('b', 'n', k, k)), ...keys(4).map((k) => write('c', 'n', k, k))],
    });
    const counter = new QueryCounter();
    const snapshot = await readSessionPluginData(spec.db.withPlugin(counter), { tenantId: t, sessionId: s }, { rows: 5, bytes: huge.bytes, perNamespace: 10 });
    expect(counter.rows).toBe(6);
    expect(snapshot.covers('a', 'n')).toBe(true);
    expect(snapshot.list('a', 'n').map((r) => r.key)).toEqual(keys(3));
    expect(snapshot.covers('b', 'n')).toBe(false);
    expect(snapshot.covers('c', 'n')).toBe(false);
    // not seen at all: unknown, not empty
    expect(snapshot.covers('zzz', 'n')).toBe(false);
  });

  it('bounded by bytes: a value past the running byte bound is not brought back, and its namespace is not held', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    await spec.append({ tenant: t, stream: s, events: [write('a', 'n', 'small', 'x'), write('b', 'n', 'big', 'ü'.repeat(20_000))] });
    const snapshot = await readSessionPluginData(spec.db, { tenantId: t, sessionId: s }, { rows: 100, bytes: 1000, perNamespace: 10 });
    expect(snapshot.covers('a', 'n')).toBe(true);
    expect(snapshot.get('a', 'n', 'small')).toBe('x');
    expect(snapshot.covers('b', 'n')).toBe(false);
    expect(snapshot.get('b', 'n', 'big')).toBeUndefined();
  });

  it('a namespace of more rows than a namespace may bring is not read: one row in its place, not held; the others are, and a namespace with no row is empty', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const keys = (n: number) => Array.from({ length: n }, (_, i) => `k${i}`);
    await spec.append({
      tenant: t,
      stream: s,
      events: [...keys(30).map((k) => write('a', 'big', k, k)), write('a', 'small', 'one', 1), write('b', 'n', 'two', 2)],
    });
    const counter = new QueryCounter();
    const snapshot = await readSessionPluginData(spec.db.withPlugin(counter), { tenantId: t, sessionId: s }, { rows: 100, bytes: 1 << 20, perNamespace: 10 });
    expect(counter.rows).toBe(3);
    expect(snapshot.covers('a', 'big')).toBe(false);
    expect(snapshot.covers('a', 'small')).toBe(true);
    expect(snapshot.get('a', 'small', 'one')).toBe(1);
    expect(snapshot.list('b', 'n')).toEqual([{ key: 'two', value: 2 }]);
    expect(snapshot.covers('c', 'none')).toBe(true);
    expect(snapshot.list('c', 'none')).toEqual([]);
  });

  it('after: a snapshot with the events appended since applied (as the journal holds them) reads as the store then reads: jsonb key order, -0 as the column gives it back (0)', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const scope = { tenantId: t, sessionId: s };
    await spec.append({ tenant: t, stream: s, events: [write('p', 'n', 'a', { b: 1 })] });
    const before = await readSessionPluginData(spec.db, scope, huge);
    const { events } = await spec.store.append({
      tenantId: t,
      streamId: s,
      expectedVersion: 1,
      events: [write('p', 'n', 'a', { zz: -0, Ō: [{ y: -0, x: 1 }], a: 2 }), write('p', 'n', 'b', -0)],
    });
    const store = await readSessionPluginData(spec.db, scope, huge);
    const after = before.after(events, huge);
    expect(after.list('p', 'n')).toEqual(store.list('p', 'n'));
    expect(Object.is(after.get('p', 'n', 'b'), 0)).toBe(true);
    expect(Object.keys(after.get('p', 'n', 'a') as object)).toEqual(Object.keys(store.get('p', 'n', 'a') as object));
  });

  it('property: every namespace a snapshot holds reads as the store reads it (get, list, selfData), whatever the bounds; its JSON form (read beside another read) makes the same snapshot', async () => {
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('write' as const),
        plugin: fc.constantFrom('p', 'q'),
        ns: fc.constantFrom('n', 'm'),
        key: fc.integer({ min: 1, max: 8 }),
        value: fc.jsonValue({ maxDepth: 2 }),
      }),
      fc.record({
        kind: fc.constant('delete' as const),
        plugin: fc.constantFrom('p', 'q'),
        ns: fc.constantFrom('n', 'm'),
        key: fc.integer({ min: 1, max: 8 }),
      }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(op, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 50, max: 4000 }),
        fc.integer({ min: 1, max: 8 }),
        async (batches, limit, rows, bytes, perNamespace) => {
          const id = uniqueIds();
          const [t, s] = [id('t'), id('s')];
          for (const batch of batches) {
            const events = batch.map((o) => (o.kind === 'write' ? write(o.plugin, o.ns, `k${o.key}`, o.value) : remove(o.plugin, o.ns, `k${o.key}`)));
            await spec.append({ tenant: t, stream: s, events });
          }
          const snapshot = await readSessionPluginData(spec.db, { tenantId: t, sessionId: s }, { rows, bytes, perNamespace });
          // read as one JSON value beside another read (the turn step's read of the log): the same snapshot
          const bounds = { rows, bytes, perNamespace };
          const { rows: read } = await sql<{ v: unknown }>`select ${sessionPluginDataJson({ tenantId: t, sessionId: s }, bounds)} as v`.execute(spec.db);
          expect(sessionPluginDataOf(read[0].v, bounds)).toEqual(snapshot);
          const whole = await readSessionPluginData(spec.db, { tenantId: t, sessionId: s }, huge);
          for (const pluginId of ['p', 'q']) {
            const data = new PluginDataStore(spec.db).scope({ tenantId: t, sessionId: s, pluginId });
            for (const ns of ['n', 'm']) {
              expect(whole.covers(pluginId, ns)).toBe(true);
              for (const view of snapshot.covers(pluginId, ns) ? [snapshot, whole] : [whole]) {
                expect(view.selfData(pluginId, ns, { limit })).toEqual(await data.selfData(ns, { limit }));
                expect(view.list(pluginId, ns, { limit })).toEqual(await data.list(ns, { limit }));
                for (const key of ['k1', 'k2', 'k3']) expect(view.get(pluginId, ns, key)).toEqual(await data.get(ns, key));
              }
            }
          }
        },
      ),
      { numRuns: 40 },
    );
  }, 180_000);
});
