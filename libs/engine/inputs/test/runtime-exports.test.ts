import type { HistoryMessage } from '../../../context';
import { PluginManifestError } from '../../../plugins-sdk';
import type { RuntimeOutput } from '../../journal/journal';
import { plugin, pluginFolders } from './plugin-folders';
import type { RuntimeCatalog } from '../../catalog/runtime-catalog';
import { resolveRuntimeExports } from '..';

describe('resolveRuntimeExports (io.exports)', () => {
  const folders = pluginFolders('covel-exports-');
  afterAll(() => folders.cleanUp());
  const catalogOf = folders.catalogOf;
  /** A structured runtime of `stage` exporting `exports` (YAML lines under `io.exports`). */
  const exporter = (id: string, stage: string, exports: string) =>
    plugin(id, `  schedule: { stage: ${stage} }\n  outputKind: structured\n  io:\n    exports:\n${exports}`);
  const story = plugin('story', '  schedule: { stage: narrative }\n  outputKind: story\n  output: { contract: narrative-engine@2 }');
  const output = (pluginId: string, text: string, stage = 'pre-turn'): RuntimeOutput => ({
    stage,
    pluginId,
    runtimeId: pluginId,
    outputKind: 'structured',
    messageId: `now-${pluginId}`,
    text,
    attempt: 1,
    midTurnBefore: 0,
  });
  const committed = (pluginId: string, turn: number, text: string): HistoryMessage => ({
    messageId: `t${turn}-${pluginId}`,
    turnId: `t${turn}`,
    role: 'assistant',
    sourceType: 'runtime',
    pluginId,
    runtimeId: pluginId,
    outputKind: 'structured',
    text,
  });
  const resolve = (catalog: RuntimeCatalog, consumer: string, outputs: RuntimeOutput[], history: HistoryMessage[]) =>
    resolveRuntimeExports({ catalog, runtime: catalog.find(consumer, consumer)!, outputs, history });

  it('the latest result: an earlier stage of this execution first, else the latest committed one; resultId is its message id', () => {
    const catalog = catalogOf({
      'pre/PLUGIN.md': exporter('pre', 'pre-turn', '      mood: { select: /mood, to: story }'),
      'story/PLUGIN.md': story,
    });
    const history = [committed('pre', 1, '{"mood":"calm"}'), committed('pre', 2, '{"mood":"tense"}')];
    expect(resolve(catalog, 'story', [], history)).toEqual([
      { name: 'mood', value: 'tense', source: { pluginId: 'pre', runtimeId: 'pre', resultId: 't2-pre' } },
    ]);
    expect(resolve(catalog, 'story', [output('pre', '{"mood":"grim"}')], history)).toEqual([
      { name: 'mood', value: 'grim', source: { pluginId: 'pre', runtimeId: 'pre', resultId: 'now-pre' } },
    ]);
  });

  it('a skipped run (empty output) produced no result: the one before stands; no result at all leaves the entry out', () => {
    const catalog = catalogOf({
      'pre/PLUGIN.md': exporter('pre', 'pre-turn', '      mood: { select: /mood, to: story }'),
      'story/PLUGIN.md': story,
    });
    const history = [committed('pre', 1, '{"mood":"calm"}'), committed('pre', 2, '')];
    expect(resolve(catalog, 'story', [output('pre', '')], history).map((e) => [e.value, e.source.resultId])).toEqual([['calm', 't1-pre']]);
    expect(resolve(catalog, 'story', [output('pre', '')], [committed('pre', 2, '')])).toEqual([]);
  });

  it("a runtime of the same or a later stage: this execution's output is not read (it may or may not be recorded yet), the committed one is", () => {
    const catalog = catalogOf({
      'late/PLUGIN.md': exporter('late', 'post-turn', '      facts: { to: story }'),
      'story/PLUGIN.md': story,
    });
    expect(resolve(catalog, 'story', [output('late', '{"n":2}', 'post-turn')], [committed('late', 1, '{"n":1}')])).toEqual([
      { name: 'facts', value: { n: 1 }, source: { pluginId: 'late', runtimeId: 'late', resultId: 't1-late' } },
    ]);
  });

  it('audience: story, self and a contract; a pointer that finds nothing leaves the entry out; ordered by plugin id then as declared', () => {
    const catalog = catalogOf({
      'zeta/PLUGIN.md': exporter(
        'zeta',
        'pre-turn',
        '      z2: { select: /b, to: story }\n      z1: { select: /a, to: story }\n      gone: { select: /c, to: story }',
      ),
      'alpha/PLUGIN.md': exporter(
        'alpha',
        'pre-turn',
        '      own: { select: /a, to: self }\n      engine: { select: /b, to: { contract: narrative-engine@2 } }',
      ),
      'alpha/runtimes/mine/RUNTIME.md': '---\nid: mine\nschedule: { stage: post-turn }\n---\nmine.',
      'story/PLUGIN.md': story,
      'other/PLUGIN.md': plugin('other', '  schedule: { stage: post-turn }'),
    });
    const outputs = [output('zeta', '{"a":1,"b":2}'), output('alpha', '{"a":"A","b":"B"}')];
    expect(resolve(catalog, 'story', outputs, []).map((e) => [e.name, e.value])).toEqual([
      ['engine', 'B'],
      ['z2', 2],
      ['z1', 1],
    ]);
    const mine = resolveRuntimeExports({ catalog, runtime: catalog.find('alpha', 'mine')!, outputs, history: [] });
    expect(mine.map((e) => [e.name, e.value])).toEqual([['own', 'A']]);
    expect(resolve(catalog, 'other', outputs, [])).toEqual([]);
  });

  it('two exports of one name reaching one agent runtime stop start-up, naming both', () => {
    const files = {
      'a/PLUGIN.md': exporter('a', 'pre-turn', '      facts: { to: story }'),
      'b/PLUGIN.md': exporter('b', 'pre-turn', '      facts: { to: story }'),
      'story/PLUGIN.md': story,
    };
    expect(() => catalogOf(files)).toThrow(PluginManifestError);
    expect(() => catalogOf(files)).toThrow(
      /runtime\.io\.exports\.facts: plugin b: runtime b exports "facts" to story\/story, which already sees an export of that name from a\/a/,
    );
    // the same names to different audiences hold together
    expect(() => catalogOf({ ...files, 'b/PLUGIN.md': exporter('b', 'pre-turn', '      facts: { to: self }') })).not.toThrow();
  });

  it('only a structured runtime exports', () => {
    expect(() => catalogOf({ 'x/PLUGIN.md': plugin('x', '  outputKind: story\n  io:\n    exports:\n      facts: { to: story }') })).toThrow(
      /runtime\.io\.exports: only a runtime with outputKind: structured exports/,
    );
  });
});
