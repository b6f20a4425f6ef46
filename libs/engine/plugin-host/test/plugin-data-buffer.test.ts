import type { JsonValue, PluginDataReader } from '../../../events';
import { MAX_PLUGIN_DATA_CHANGES, MAX_PLUGIN_DATA_VALUE_BYTES, PluginDataBuffer } from '../plugin-data-buffer';

/** A stored namespace in creation order, read like the store reads it. */
function stored(rows: Record<string, [string, JsonValue][]>): PluginDataReader & { lists: number[] } {
  const lists: number[] = [];
  return {
    lists,
    async get(ns, key) {
      return rows[ns]?.find(([k]) => k === key)?.[1];
    },
    async list(ns, options = {}) {
      lists.push(options.limit ?? 100);
      return (rows[ns] ?? []).slice(0, options.limit ?? 100).map(([key, value]) => ({ key, value }));
    },
    async selfData() {
      throw new Error('not used');
    },
  };
}

describe("a function run's ctx.pluginData: reads see its own writes, writes are checked and kept until the run ends", () => {
  it('get and list overlay the run’s changes on the stored rows, in creation order, within the limit', async () => {
    const store = stored({
      facts: [
        ['a', 1],
        ['b', 2],
        ['c', 3],
      ],
    });
    const buffer = new PluginDataBuffer('p', store);
    const data = buffer.writer();
    await data.set('facts', 'b', { now: 20 });
    await data.delete('facts', 'a');
    await data.set('facts', 'new', 'n');
    await data.set('other', 'x', true);
    expect(await data.get('facts', 'a')).toBeNull();
    expect(await data.get('facts', 'b')).toEqual({ now: 20 });
    expect(await data.get('facts', 'c')).toBe(3);
    expect(await data.get('facts', 'missing')).toBeNull();
    expect(await data.list('facts')).toEqual([
      { key: 'b', value: { now: 20 } },
      { key: 'c', value: 3 },
      { key: 'new', value: 'n' },
    ]);
    expect(await data.list('facts', { limit: 1 })).toEqual([{ key: 'b', value: { now: 20 } }]);
    // enough stored rows asked for that the run's deletes cannot shorten a full page
    expect(store.lists.at(-1)).toBe(1 + 3);
    expect(buffer.changes()).toEqual([
      { namespace: 'facts', key: 'b', value: { now: 20 } },
      { namespace: 'facts', key: 'a' },
      { namespace: 'facts', key: 'new', value: 'n' },
      { namespace: 'other', key: 'x', value: true },
    ]);
  });

  it('a value is copied when written and when read: changing it afterwards changes nothing stored', async () => {
    const buffer = new PluginDataBuffer('p', stored({}));
    const data = buffer.writer();
    const value = { list: [1] };
    await data.set('n', 'k', value);
    value.list.push(2);
    const read = (await data.get('n', 'k')) as { list: number[] };
    read.list.push(3);
    expect(buffer.changes()[0].value).toEqual({ list: [1] });
  });

  it.each([
    ['an empty namespace', () => ['', 'k', 1], 'set: namespace'],
    ['a control character in a key', () => ['n', 'a\nb', 1], 'set: key'],
    ['a lone surrogate in a key', () => ['n', 'a\ud800', 1], 'set: key: must be well-formed Unicode'],
    ['a lone surrogate in a value', () => ['n', 'k', { s: '\udc00x' }], 'must be well-formed Unicode'],
    ['U+0000 in a value', () => ['n', 'k', 'a\u0000b'], 'U+0000'],
    ['a value that is not JSON (undefined)', () => ['n', 'k', undefined], 'value'],
    ['a value that is not JSON (a function inside)', () => ['n', 'k', { f: () => 1 }], 'value'],
    ['a value that is not JSON (NaN)', () => ['n', 'k', Number.NaN], 'value'],
    ['a value over the size limit', () => ['n', 'k', '墨'.repeat(MAX_PLUGIN_DATA_VALUE_BYTES / 3 + 1)], `at most ${MAX_PLUGIN_DATA_VALUE_BYTES} bytes`],
    ['a key longer than 512', () => ['n', 'k'.repeat(513), 1], 'set: key'],
  ] as const)('refuses %s with an error naming the plugin and the call', async (_what, args, detail) => {
    const data = new PluginDataBuffer('ledger', stored({})).writer();
    const [ns, key, value] = args();
    await expect(data.set(ns as string, key as string, value)).rejects.toMatchObject({
      code: 'PLUGIN_DATA_REFUSED',
      message: expect.stringMatching(new RegExp(`^plugin ledger: ctx\\.pluginData .*${detail.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`)),
    });
  });

  it('takes CJK and emoji keys and values whole, at the size limit', async () => {
    const buffer = new PluginDataBuffer('p', stored({}));
    const text = '墨🙂'.repeat(10_000);
    await buffer.writer().set('笔记', '状态 😀', { text });
    expect(buffer.changes()).toEqual([{ namespace: '笔记', key: '状态 😀', value: { text } }]);
  });

  it('a run changes at most MAX_PLUGIN_DATA_CHANGES rows; rewriting a row counts once', async () => {
    const data = new PluginDataBuffer('p', stored({})).writer();
    for (let i = 0; i < MAX_PLUGIN_DATA_CHANGES; i++) await data.set('n', `k${i}`, i);
    await data.set('n', 'k0', 'again');
    await expect(data.set('n', 'one-more', 1)).rejects.toMatchObject({ code: 'PLUGIN_DATA_REFUSED' });
  });

  it('a list limit outside 1..1000 is refused', async () => {
    const data = new PluginDataBuffer('p', stored({})).writer();
    await expect(data.list('n', { limit: 0 })).rejects.toMatchObject({ code: 'PLUGIN_DATA_REFUSED' });
    await expect(data.list('n', { limit: 1001 })).rejects.toMatchObject({ code: 'PLUGIN_DATA_REFUSED' });
  });
});
