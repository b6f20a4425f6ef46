import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { loadPlugins, PluginManifestError } from '../../../plugins-sdk';
import { PluginEntryError } from '../../errors';
import { PluginHost } from '../host';

describe('function runtimes and io.selfData at start-up', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'covel-functions-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function plugin(id: string, files: Record<string, string>) {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, id, path)), { recursive: true });
      writeFileSync(join(dir, id, path), text);
    }
  }
  const manifest = (id: string, extra = '') => `---\nid: ${id}\nname: ${id}\nversion: 0.0.1\n${extra}---\nBody.\n`;
  const runtime = (id: string, type: string, extra = '') => `---\nid: ${id}\ntype: ${type}\nschedule:\n  stage: pre-turn\n${extra}---\n`;
  const entry = (body: string) => `exports.register = function (api) {\n${body}\n};\n`;
  const load = () => PluginHost.load(loadPlugins(dir));

  it('a function runtime and its api.runFunction registration load', async () => {
    plugin('calc', {
      'PLUGIN.md': manifest('calc', 'entry: server/index.js\n'),
      'runtimes/sum/RUNTIME.md': runtime('sum', 'function'),
      'server/index.js': entry("api.runFunction('sum', () => 1);"),
    });
    expect([...(await load()).registry.functions.keys()]).toEqual(['calc/sum']);
  });

  it('a function runtime without api.runFunction stops start-up, naming plugin and runtime', async () => {
    plugin('calc', {
      'PLUGIN.md': manifest('calc', 'entry: server/index.js\n'),
      'runtimes/sum/RUNTIME.md': runtime('sum', 'function'),
      'server/index.js': entry(''),
    });
    await expect(load()).rejects.toThrow(PluginEntryError);
    await expect(load()).rejects.toThrow('plugin calc: runtime sum is a function runtime but register(api) does not call api.runFunction("sum", fn)');
  });

  it('a function runtime in a plugin with no server entry stops start-up', async () => {
    plugin('calc', { 'PLUGIN.md': manifest('calc'), 'runtimes/sum/RUNTIME.md': runtime('sum', 'function') });
    await expect(load()).rejects.toThrow('plugin calc: runtime sum is a function runtime but the plugin has no server entry');
  });

  it('api.runFunction for an agent runtime stops start-up', async () => {
    plugin('calc', {
      'PLUGIN.md': manifest('calc', 'entry: server/index.js\n'),
      'runtimes/talk/RUNTIME.md': runtime('talk', 'agent'),
      'server/index.js': entry("api.runFunction('talk', () => 1);"),
    });
    await expect(load()).rejects.toThrow('plugin calc: runFunction("talk"): runtime talk is an agent runtime');
  });

  it('io.selfData naming hidden world data (_hidden.*) stops start-up, naming the file and the field', () => {
    plugin('spy', {
      'PLUGIN.md': manifest('spy'),
      'runtimes/peek/RUNTIME.md': runtime('peek', 'agent', 'io:\n  selfData:\n    - notes\n    - _hidden.secrets\n'),
    });
    expect(() => loadPlugins(dir)).toThrow(PluginManifestError);
    expect(() => loadPlugins(dir)).toThrow(/RUNTIME\.md[\s\S]*io\.selfData\.1[\s\S]*hidden world data/);
  });

  it('an io.selfData limit above the store bound (1000) stops start-up', () => {
    plugin('spy', {
      'PLUGIN.md': manifest('spy'),
      'runtimes/peek/RUNTIME.md': runtime('peek', 'agent', 'io:\n  selfData:\n    - { namespace: notes, limit: 5000 }\n'),
    });
    expect(() => loadPlugins(dir)).toThrow(/io\.selfData\.0\.limit[\s\S]*at most 1000/);
  });
});
