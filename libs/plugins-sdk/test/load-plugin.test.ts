import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { loadPlugin, loadPlugins, PluginManifestError } from '..';

describe('plugin folders: PLUGIN.md, runtimes/<id>/RUNTIME.md, locale variants, the server entry', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  /** A temporary folder with these files (paths relative to it). */
  function folder(files: Record<string, string>): string {
    const dir = mkdtempSync(join(tmpdir(), 'covel-plugin-'));
    dirs.push(dir);
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      writeFileSync(join(dir, name), text);
    }
    return dir;
  }
  const head = (id = 'keeper') => `id: ${id}\nname: Keeper\nversion: "1"`;
  function loadError(dir: string): string {
    try {
      loadPlugin(dir);
    } catch (error) {
      expect(error).toBeInstanceOf(PluginManifestError);
      return (error as PluginManifestError).message;
    }
    throw new Error('expected the plugin to be rejected');
  }

  it('an inline runtime: its id defaults to the plugin id, its body is PLUGIN.md body per locale', () => {
    const dir = folder({
      'PLUGIN.md': `---\n${head()}\nruntime:\n  schedule: { stage: narrative }\n  outputKind: story\n---\nKeep the ledger.`,
      'PLUGIN.zh-Hans.md': '---\n---\n记账。',
    });
    const plugin = loadPlugin(dir);
    expect(plugin.runtimes).toHaveLength(1);
    const [r] = plugin.runtimes;
    expect(r).toMatchObject({
      id: 'keeper',
      fullId: 'keeper/keeper',
      inline: true,
      file: join(dir, 'PLUGIN.md'),
      bodies: { en: 'Keep the ledger.', 'zh-Hans': '记账。' },
    });
    expect(r.manifest).toMatchObject({ id: 'keeper', schedule: { stage: 'narrative', trigger: 'auto' }, outputKind: 'story' });
    expect(plugin.bodies).toEqual({ en: 'Keep the ledger.', 'zh-Hans': '记账。' });
    expect(plugin.entry).toBeNull();
  });

  it('child runtimes: each with its own body and locale variant, ordered by id after the inline one', () => {
    const dir = folder({
      'PLUGIN.md': `---\n${head()}\nruntime:\n  id: main\n---\nMain body.`,
      'runtimes/tally/RUNTIME.md': '---\nid: tally\ntype: function\nschedule: { stage: pre-turn }\n---\nTally body.',
      'runtimes/audit/RUNTIME.md': '---\nid: audit\noutputKind: structured\n---\nAudit body.',
      'runtimes/audit/RUNTIME.zh-Hans.md': '审计。',
    });
    const plugin = loadPlugin(dir);
    expect(plugin.runtimes.map((r) => [r.fullId, r.inline, r.bodies.en, r.bodies['zh-Hans']])).toEqual([
      ['keeper/main', true, 'Main body.', 'Main body.'],
      ['keeper/audit', false, 'Audit body.', '审计。'],
      ['keeper/tally', false, 'Tally body.', 'Tally body.'],
    ]);
    expect(plugin.runtimes[2]).toMatchObject({ file: join(dir, 'runtimes', 'tally', 'RUNTIME.md'), manifest: { type: 'function', agent: null } });
  });

  it('a plugin with child runtimes only: PLUGIN.md body belongs to no runtime', () => {
    const dir = folder({ 'PLUGIN.md': `---\n${head()}\n---\nAbout.`, 'runtimes/a/RUNTIME.md': '---\nid: a\n---\nA.' });
    expect(loadPlugin(dir).runtimes.map((r) => [r.id, r.bodies.en])).toEqual([['a', 'A.']]);
  });

  it('a child runtime: the folder name is its id; errors name RUNTIME.md and the field', () => {
    const mismatch = folder({ 'PLUGIN.md': `---\n${head()}\n---\n`, 'runtimes/tally/RUNTIME.md': '---\nid: count\n---\n' });
    expect(loadError(mismatch)).toBe(
      `${join(mismatch, 'runtimes', 'tally', 'RUNTIME.md')}: id: "count" does not match its folder runtimes/tally (the folder name is the runtime's id)`,
    );
    const unknown = folder({ 'PLUGIN.md': `---\n${head()}\n---\n`, 'runtimes/tally/RUNTIME.md': '---\nid: tally\nagent:\n  history: { maxTurn: 1 }\n---\n' });
    expect(loadError(unknown)).toBe(`${join(unknown, 'runtimes', 'tally', 'RUNTIME.md')}: agent.history.maxTurn: unknown key`);
    const empty = folder({ 'PLUGIN.md': `---\n${head()}\n---\n`, 'runtimes/tally/notes.md': 'x' });
    expect(loadError(empty)).toBe(`${join(empty, 'runtimes', 'tally')}: (folder): a runtime folder needs a RUNTIME.md`);
    const twice = folder({ 'PLUGIN.md': `---\n${head()}\nruntime: { id: tally }\n---\n`, 'runtimes/tally/RUNTIME.md': '---\nid: tally\n---\n' });
    expect(loadError(twice)).toBe(`${join(twice, 'runtimes', 'tally', 'RUNTIME.md')}: id: runtime "tally" is also the inline runtime of PLUGIN.md`);
  });

  it('locale variants: RUNTIME.<locale>.md gives only a body; PLUGIN.<locale>.md translates static segments by id', () => {
    const runtimeVariant = folder({
      'PLUGIN.md': `---\n${head()}\n---\n`,
      'runtimes/a/RUNTIME.md': '---\nid: a\n---\nA.',
      'runtimes/a/RUNTIME.zh-Hans.md': '---\noutputKind: story\n---\n甲。',
    });
    expect(loadError(runtimeVariant)).toBe(`${join(runtimeVariant, 'runtimes', 'a', 'RUNTIME.zh-Hans.md')}: outputKind: unknown key`);
    const pluginVariant = folder({
      'PLUGIN.md': `---\n${head()}\nruntime: {}\ncontributes:\n  prompt:\n    - { id: s, content: Plain. }\n---\nBody.`,
      'PLUGIN.zh-Hans.md': '---\nruntime: {}\n---\n体',
    });
    expect(loadError(pluginVariant)).toBe(`${join(pluginVariant, 'PLUGIN.zh-Hans.md')}: runtime: unknown key`);
    const ok = loadPlugin(
      folder({
        'PLUGIN.md': `---\n${head()}\nruntime: {}\ncontributes:\n  prompt:\n    - { id: s, content: Plain. }\n---\nBody.`,
        'PLUGIN.zh-Hans.md': '---\ncontributes:\n  prompt:\n    - { id: s, content: 朴素。 }\n---\n体',
      }),
    );
    expect(ok.staticSegments['zh-Hans'].map((s) => s.content)).toEqual(['朴素。']);
    expect(ok.runtimes[0].bodies).toEqual({ en: 'Body.', 'zh-Hans': '体' });
  });

  it('the server entry: server/index.ts when present, a declared entry inside the folder, else null', () => {
    const byDefault = folder({ 'PLUGIN.md': `---\n${head()}\n---\n`, 'server/index.ts': 'export function register() {}' });
    expect(loadPlugin(byDefault).entry).toBe(join(byDefault, 'server', 'index.ts'));
    const js = folder({ 'PLUGIN.md': `---\n${head()}\n---\n`, 'server/index.js': 'exports.register = () => {};' });
    expect(loadPlugin(js).entry).toBe(join(js, 'server', 'index.js'));
    const declared = folder({ 'PLUGIN.md': `---\n${head()}\nentry: lib/main.js\n---\n`, 'lib/main.js': 'exports.register = () => {};' });
    expect(loadPlugin(declared).entry).toBe(join(declared, 'lib', 'main.js'));
    const missing = folder({ 'PLUGIN.md': `---\n${head()}\nentry: lib/main.js\n---\n` });
    expect(loadError(missing)).toBe(`${join(missing, 'PLUGIN.md')}: entry: "lib/main.js" does not exist`);
    const outside = folder({ 'PLUGIN.md': `---\n${head()}\nentry: ../other/index.ts\n---\n` });
    expect(loadError(outside)).toBe(`${join(outside, 'PLUGIN.md')}: entry: "../other/index.ts" is outside the plugin folder`);
  });

  it('loadPlugins: plugin ids are unique across folders', () => {
    const dir = folder({ 'a/PLUGIN.md': `---\n${head('same')}\n---\n`, 'b/PLUGIN.md': `---\n${head('same')}\n---\n`, 'c/readme.md': 'not a plugin' });
    expect(() => loadPlugins(dir)).toThrow(`${join(dir, 'b', 'PLUGIN.md')}: id: plugin id "same" is also the id of ${join(dir, 'a', 'PLUGIN.md')}`);
  });

  it('every plugin and fixture folder of the repository loads in the new layout', () => {
    const repo = join(__dirname, '..', '..', '..');
    for (const dir of ['plugins', 'test/fixtures/audit-plugins', 'test/fixtures/staged-plugins', 'test/fixtures/two-story-plugins']) {
      expect(loadPlugins(join(repo, dir)).length).toBeGreaterThan(0);
    }
    const alpha = loadPlugins(join(repo, 'test/fixtures/two-story-plugins')).find((p) => p.manifest.id === 'alpha')!;
    expect(alpha.runtimes.map((r) => [r.fullId, r.manifest.schedule.stage ?? null])).toEqual([
      ['alpha/echo', null],
      ['alpha/teller', 'narrative'],
    ]);
  });
});
