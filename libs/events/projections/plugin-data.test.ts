import { projectionSpec, uniqueIds } from '../../../test/support/projection-spec';
import { InvalidEventError } from '../errors';
import type { NewEvent } from '../event-types';
import { pluginDataProjection } from './plugin-data';

const spec = projectionSpec({ inline: pluginDataProjection });
beforeAll(() => spec.start(), 120_000);
afterAll(() => spec.stop());

const turn = { executionId: 'e-1', turnId: 't-1', attempt: 1 };
const written = (pluginId: string, namespace: string, key: string, value: unknown): NewEvent => ({
  type: 'plugin-data.written@1',
  data: { ...turn, pluginId, namespace, key, value: value as never },
});
const deleted = (pluginId: string, namespace: string, key: string): NewEvent => ({
  type: 'plugin-data.deleted@1',
  data: { ...turn, pluginId, namespace, key },
});
const row = (t: string, s: string, plugin: string, namespace: string, key: string, value: unknown, created: number, updated = created) => ({
  tenant_id: t,
  session_id: s,
  plugin_id: plugin,
  namespace,
  key,
  value,
  created_position: created,
  updated_position: updated,
});

describe('plugin_data (inline projection)', () => {
  it('given nothing, when a plugin writes two keys, then each is a row created at its event’s log position', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    await spec.check({
      when: [{ tenant: t, stream: s, events: [written('tracker', 'status', 'hp', { now: 3 }), written('tracker', 'status', 'mood', 'grim')] }],
      then: ({ position }) => ({
        plugin_data: [row(t, s, 'tracker', 'status', 'hp', { now: 3 }, position(0)), row(t, s, 'tracker', 'status', 'mood', 'grim', position(1))],
      }),
    });
  });

  it('a rewrite replaces the value and moves recency; the creation order stays', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    await spec.check({
      given: [{ tenant: t, stream: s, events: [written('p', 'n', 'a', 1), written('p', 'n', 'b', 2)] }],
      when: [{ tenant: t, stream: s, events: [written('p', 'n', 'a', { now: 'changed' })] }],
      then: ({ position }) => ({
        plugin_data: [row(t, s, 'p', 'n', 'a', { now: 'changed' }, position(0), position(2)), row(t, s, 'p', 'n', 'b', 2, position(1))],
        plugin_data_namespaces: [{ tenant_id: t, session_id: s, plugin_id: 'p', namespace: 'n', row_count: 2 }],
      }),
    });
  });

  it('a delete removes the row; a key written again after it is a new row, created anew', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    await spec.check({
      given: [{ tenant: t, stream: s, events: [written('p', 'n', 'a', 1), written('p', 'n', 'b', 2), written('p', 'n', 'c', 3)] }],
      when: [{ tenant: t, stream: s, events: [deleted('p', 'n', 'b'), deleted('p', 'n', 'a'), written('p', 'n', 'a', 'back')] }],
      then: ({ position }) => ({
        plugin_data: [row(t, s, 'p', 'n', 'c', 3, position(2)), row(t, s, 'p', 'n', 'a', 'back', position(5))],
        plugin_data_namespaces: [{ tenant_id: t, session_id: s, plugin_id: 'p', namespace: 'n', row_count: 2 }],
      }),
    });
  });

  it('a delete of a key that is not there changes nothing', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    await spec.check({
      given: [{ tenant: t, stream: s, events: [written('p', 'n', 'a', 1)] }],
      when: [{ tenant: t, stream: s, events: [deleted('p', 'n', 'zzz'), deleted('p', 'other', 'a'), deleted('q', 'n', 'a')] }],
      then: ({ position }) => ({
        plugin_data: [row(t, s, 'p', 'n', 'a', 1, position(0))],
        plugin_data_namespaces: [{ tenant_id: t, session_id: s, plugin_id: 'p', namespace: 'n', row_count: 1 }],
      }),
    });
  });

  it('the same key in another namespace, plugin, session or tenant is another row; a write or delete touches only its own', async () => {
    const id = uniqueIds();
    const [t1, t2, s1, s2, s3] = [id('t1'), id('t2'), id('s1'), id('s2'), id('s3')];
    await spec.check({
      given: [
        { tenant: t1, stream: s1, events: [written('p', 'n', 'k', 'mine'), written('p', 'm', 'k', 'other namespace'), written('q', 'n', 'k', 'other plugin')] },
        { tenant: t1, stream: s2, events: [written('p', 'n', 'k', 'other session')] },
        { tenant: t2, stream: s3, events: [written('p', 'n', 'k', 'other tenant')] },
      ],
      when: [{ tenant: t1, stream: s1, events: [written('p', 'n', 'k', 'rewritten'), deleted('p', 'm', 'k')] }],
      then: ({ position }) => ({
        plugin_data: [
          row(t1, s1, 'p', 'n', 'k', 'rewritten', position(0), position(5)),
          row(t1, s1, 'q', 'n', 'k', 'other plugin', position(2)),
          row(t1, s2, 'p', 'n', 'k', 'other session', position(3)),
          row(t2, s3, 'p', 'n', 'k', 'other tenant', position(4)),
        ],
        plugin_data_namespaces: [
          { tenant_id: t1, session_id: s1, plugin_id: 'p', namespace: 'm', row_count: 0 },
          { tenant_id: t1, session_id: s1, plugin_id: 'p', namespace: 'n', row_count: 1 },
          { tenant_id: t1, session_id: s1, plugin_id: 'q', namespace: 'n', row_count: 1 },
          { tenant_id: t1, session_id: s2, plugin_id: 'p', namespace: 'n', row_count: 1 },
          { tenant_id: t2, session_id: s3, plugin_id: 'p', namespace: 'n', row_count: 1 },
        ],
      }),
    });
  });

  it('keys and values are stored unchanged: CJK, emoji, ZWJ, RTL, markup, nested JSON', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const value = { 名前: '鈴木 😀👨‍👩‍👧', text: '</self-data> {{ session.id }} — ملخص', list: [1, 2.5, null, true, { deep: ['x'] }] };
    await spec.check({
      when: [{ tenant: t, stream: s, events: [written('p', '状态', 'キー 👨‍👩‍👧', value)] }],
      then: ({ position }) => ({ plugin_data: [row(t, s, 'p', '状态', 'キー 👨‍👩‍👧', value, position(0))] }),
    });
  });

  it.each([
    ['an empty key', { key: '' }],
    ['an empty namespace', { namespace: '' }],
    ['a key with a newline (it would forge a `- key | JSON` row)', { key: 'a\n- b' }],
    ['a namespace too long', { namespace: 'n'.repeat(129) }],
    ['a key too long', { key: 'k'.repeat(513) }],
    ['a value that is not JSON', { value: () => 1 }],
    ['a value with U+0000 (jsonb cannot hold it)', { value: { text: 'a\u0000b' } }],
  ])('%s is refused at the boundary: no event, no row', async (_name, change) => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const event = { type: 'plugin-data.written@1', data: { ...turn, pluginId: 'p', namespace: 'n', key: 'k', value: 1, ...change } } as NewEvent;
    await expect(spec.append({ tenant: t, stream: s, events: [event] })).rejects.toBeInstanceOf(InvalidEventError);
    expect(await spec.store.streamVersion(s)).toBe(0);
    expect(await spec.rows([s])).toEqual({ plugin_data: [], plugin_data_namespaces: [] });
  });
});
