import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { loadPlugins, PluginManifestError } from '../../../plugins-sdk';
import { PluginEntryError } from '../../errors';
import { PluginHost } from '../host';

const REPO = join(__dirname, '..', '..', '..', '..');

describe('server entries at start-up', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'covel-entries-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A plugin folder: PLUGIN.md front matter lines, and files (path → text). */
  function plugin(id: string, front: string, files: Record<string, string> = {}) {
    const root = join(dir, id);
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, 'PLUGIN.md'), `---\nid: ${id}\nname: ${id}\nversion: 0.0.1\n${front}---\nBody.\n`);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
  }
  const declares = (point: string, id: string) => `contributes:\n  extensions:\n    - point: ${point}\n      id: ${id}\n`;
  const cjs = (body: string) => ({ 'server/index.js': `exports.register = function (api) {\n${body}\n};\n` });
  const js = 'entry: server/index.js\n';
  const load = () => PluginHost.load(loadPlugins(dir));

  it('registers what each entry declares; every point is accepted; TypeScript entries at server/index.ts are found by default', async () => {
    plugin(
      'memory',
      `${js}contributes:\n  extensions:\n    - { point: memory.block-definitions@1, id: blocks }\n    - { point: session.world-context@1, id: world }\n    - { point: history.compact@2, id: compact }\n  tools:\n    - { name: remember, description: Remember a thing., parameters: { type: object } }\n`,
      cjs(`for (const [p, id] of [['memory.block-definitions@1','blocks'],['session.world-context@1','world'],['history.compact@2','compact']]) api.provideExtension(p, id, { handler: () => ({}) });
api.registerTool('remember', async () => ({ ok: true }));`),
    );
    plugin('typed', declares('prompt.segment@1', 'note'), {
      'server/index.ts': `import type { PluginApi } from '${join(REPO, 'libs', 'plugins-sdk')}';\nexport function register(api: PluginApi): void {\n  api.provideExtension('prompt.segment@1', 'note', { handler: () => [] });\n  api.hook('PostContextAssembly', () => undefined);\n}\n`,
    });
    const host = await load();
    expect(host.registry.providers('prompt.segment@1').map((e) => `${e.pluginId}/${e.id}`)).toEqual(['typed/note']);
    expect(host.registry.providers('history.compact@2').map((e) => e.pluginId)).toEqual(['memory']);
    expect(host.registry.hooksOf('PostContextAssembly').map((h) => `${h.pluginId}/${h.id}`)).toEqual(['typed/PostContextAssembly#0']);
    expect([...host.registry.tools.keys()]).toEqual(['remember']);
  });

  it.each([
    [
      'registers an undeclared extension',
      '',
      cjs(`api.provideExtension('prompt.segment@1', 'status', { handler: () => [] });`),
      /plugin p: registers extension prompt.segment@1 "status" not declared/,
    ],
    [
      'declares an extension it does not register',
      declares('prompt.segment@1', 'status'),
      cjs(''),
      /plugin p: declares extension prompt.segment@1 "status" in contributes.extensions but register\(api\) does not provide it/,
    ],
    ['register throws', '', cjs(`throw new Error('no lamp oil');`), /plugin p: register\(api\) threw: no lamp oil/],
    ['exports no register', '', { 'server/index.js': 'exports.other = 1;' }, /plugin p: server entry .* exports no register\(api\) function/],
    ['does not load', '', { 'server/index.js': 'this is not javascript' }, /plugin p: server entry .* does not load/],
    [
      'an unknown point',
      '',
      cjs(`api.provideExtension('prompt.segment@9', 'x', { handler: () => [] });`),
      /plugin p: provideExtension: unknown extension point "prompt.segment@9"/,
    ],
    [
      'registers a tool it does not declare in contributes.tools',
      '',
      cjs(`api.registerTool('remember', () => ({}));`),
      /plugin p: registerTool\("remember"\): the tool is not declared in contributes.tools/,
    ],
    [
      'declares a tool it does not register',
      'contributes:\n  tools:\n    - { name: remember, description: Remember., parameters: { type: object } }\n',
      cjs(''),
      /plugin p: declares tool "remember" in contributes.tools but register\(api\) does not call api.registerTool\("remember", fn\)/,
    ],
    [
      'runFunction for a runtime it lacks',
      '',
      cjs(`api.runFunction('ghost', () => ({}));`),
      /plugin p: runFunction\("ghost"\): the plugin has no such runtime/,
    ],
  ])('an entry that %s stops start-up naming the plugin', async (_what, front, files, message) => {
    plugin('p', `${js}${front}`, files);
    await expect(load()).rejects.toThrow(message);
    await expect(load()).rejects.toBeInstanceOf(PluginEntryError);
  });

  it('declared tools without an entry stop start-up', async () => {
    plugin('p', 'contributes:\n  tools:\n    - { name: remember, description: Remember., parameters: { type: object } }\n');
    await expect(load()).rejects.toThrow(
      'plugin p: declares tool "remember" in contributes.tools but has no server entry to register it with api.registerTool',
    );
  });

  it('declared extensions without an entry stop start-up', async () => {
    plugin('p', declares('prompt.segment@1', 'status'));
    await expect(load()).rejects.toThrow('plugin p: declares extension prompt.segment@1 "status" but has no server entry');
  });

  it('history.compact@2 takes one provider: a second registration names both plugins', async () => {
    plugin('alpha', `${js}${declares('history.compact@2', 'fold')}`, cjs(`api.provideExtension('history.compact@2', 'fold', { handler: () => ({}) });`));
    plugin('beta', `${js}${declares('history.compact@2', 'squash')}`, cjs(`api.provideExtension('history.compact@2', 'squash', { handler: () => ({}) });`));
    await expect(load()).rejects.toThrow(
      'plugin beta: history.compact@2 takes a single provider: plugin alpha provides "fold" already, plugin beta registers "squash"',
    );
  });

  it('an entry outside the plugin folder, or missing, is a manifest error on `entry`', () => {
    plugin('p', 'entry: ../elsewhere.js\n');
    expect(() => loadPlugins(dir)).toThrow(PluginManifestError);
    expect(() => loadPlugins(dir)).toThrow(/entry: "..\/elsewhere.js" is outside the plugin folder/);
    rmSync(join(dir, 'p'), { recursive: true });
    plugin('p', 'entry: server/missing.js\n');
    expect(() => loadPlugins(dir)).toThrow(/entry: "server\/missing.js" does not exist/);
  });

  it('outside Jest, as the processes run (node -r tools/register.js): a TypeScript entry and an ES module entry load', () => {
    plugin('typed', declares('prompt.segment@1', 'note'), {
      'server/index.ts': `export function register(api: { provideExtension(p: string, id: string, x: object): void }): void {\n  api.provideExtension('prompt.segment@1', 'note', { handler: () => [] });\n}\n`,
    });
    plugin('modern', `entry: server/index.mjs\n${declares('session.world-context@1', 'dims')}`, {
      'server/index.mjs': `export function register(api) { api.provideExtension('session.world-context@1', 'dims', { handler: () => ({}) }); }\n`,
    });
    const script = `require('./libs/engine/plugin-host').PluginHost.load(require('./libs/plugins-sdk').loadPlugins(${JSON.stringify(dir)}))
      .then((h) => console.log(JSON.stringify(['prompt.segment@1', 'session.world-context@1'].flatMap((p) => h.registry.providers(p).map((e) => e.pluginId + '/' + e.id)))))`;
    const out = execFileSync(process.execPath, ['-r', './tools/register.js', '-e', script], { cwd: REPO, encoding: 'utf8' });
    expect(JSON.parse(out.trim())).toEqual(['typed/note', 'modern/dims']);
  }, 60_000);
});
