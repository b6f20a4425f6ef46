import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildContext, stripCacheBreaks } from '../../libs/context';
import { RuntimeCatalog, runtimeView, staticSegments } from '../../libs/engine';
import { loadPlugin, loadPlugins, parsePluginFile, PluginManifestError, STATIC_AUDIENCE_MESSAGE } from '../../libs/plugins-sdk';

describe('§3 fixed instructions: contributes.prompt registered by the host', () => {
  const { manifest, body } = parsePluginFile(`---
id: status
name: Status
version: 0.0.1
contributes:
  prompt:
    - id: narrative-style
      content: "Keep {{ player.character }} literal."
      position: pre-history
---
Body.`);
  const plugin = {
    manifest,
    bodies: { en: body, 'zh-Hans': body },
    staticSegments: { en: manifest.contributes.prompt, 'zh-Hans': manifest.contributes.prompt },
    runtimes: [],
    entry: null,
    root: '(test)',
  };

  it('no template interpolation, the host sets providerPluginId, defaults apply, audience is the plugin itself', () => {
    expect(staticSegments([plugin], 'en')).toEqual([
      {
        id: 'narrative-style',
        providerPluginId: 'status',
        content: 'Keep {{ player.character }} literal.',
        position: 'pre-history',
        role: 'system',
        volatility: 'stable',
        order: 0,
        audience: 'self',
      },
    ]);
  });

  it('a manifest cannot claim another plugin as provider', () => {
    expect(() =>
      parsePluginFile(`---\nid: x\nname: X\nversion: "1"\ncontributes:\n  prompt:\n    - id: s\n      content: c\n      providerPluginId: narrator\n---\n`),
    ).toThrow(/contributes\.prompt\.0\.providerPluginId: unknown key/);
  });
});

describe('§3 static segments apply to their own plugin', () => {
  // the bundled narrator (a story runtime) beside two more plugins with story runtimes
  const plugins = [...loadPlugins(join(__dirname, '..', 'fixtures', 'two-story-plugins')), loadPlugin(join(__dirname, '..', '..', 'plugins', 'narrator'))];
  const catalog = new RuntimeCatalog(plugins);

  async function promptOf(pluginId: string, runtimeId: string): Promise<string> {
    const r = catalog.find(pluginId, runtimeId)!;
    const ctx = await buildContext({
      locale: 'en',
      runtime: { ...runtimeView(r, catalog.stageIndex(r)), body: r.bodies.en },
      history: [],
      playerInput: { messageId: 'u', text: 'go' },
      segments: staticSegments(plugins, 'en'),
    });
    return [stripCacheBreaks(ctx.systemPrompt), ...ctx.messages.map((m) => m.content)].join('\n');
  }

  it("plugin A's static segment reaches A's story runtimes only, and B's only B's", async () => {
    const alphaTeller = await promptOf('alpha', 'teller');
    const alphaEcho = await promptOf('alpha', 'echo');
    const betaTeller = await promptOf('beta', 'teller');
    const narrator = await promptOf('narrator', 'narrator');
    const narratorStyle = "Keep the narrator's perspective consistent.";
    expect(alphaTeller).toContain('ALPHA-STYLE');
    expect(alphaEcho).toContain('ALPHA-STYLE');
    expect(betaTeller).toContain('BETA-RULES');
    expect(narrator).toContain(narratorStyle);
    for (const other of [alphaTeller, alphaEcho]) expect(other).not.toContain('BETA-RULES');
    for (const other of [betaTeller, narrator]) expect(other).not.toContain('ALPHA-STYLE');
    for (const other of [alphaTeller, alphaEcho, narrator]) expect(other).not.toContain('BETA-RULES');
    // the narrator's segment (once `audience: story`) no longer reaches other plugins' story runtimes
    for (const other of [alphaTeller, alphaEcho, betaTeller]) expect(other).not.toContain(narratorStyle);
  });

  it('an audience in contributes.prompt fails to load, naming file and path, and says why', () => {
    const text = `---\nid: x\nname: X\nversion: "1"\ncontributes:\n  prompt:\n    - id: s\n      content: c\n      audience: story\n---\n`;
    let error: unknown;
    try {
      parsePluginFile(text, 'plugins/x/PLUGIN.md');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PluginManifestError);
    expect((error as PluginManifestError).message).toBe(`plugins/x/PLUGIN.md: contributes.prompt.0.audience: ${STATIC_AUDIENCE_MESSAGE}`);
    expect(STATIC_AUDIENCE_MESSAGE).toMatch(/own plugin/);
    expect(STATIC_AUDIENCE_MESSAGE).toMatch(/prompt\.segment@1/);
  });

  it('the bundled narrator has no audience and its segment reaches the narrator', async () => {
    const narrator = loadPlugin(join(__dirname, '..', '..', 'plugins', 'narrator'));
    expect(staticSegments([narrator], 'en').map((s) => [s.id, s.audience])).toEqual([['narrative-style', 'self']]);
  });
});

describe('strict plugin manifests: an unknown key names the file and the path', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  function pluginDir(files: Record<string, string>): string {
    const dir = mkdtempSync(join(tmpdir(), 'covel-plugin-'));
    dirs.push(dir);
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    return dir;
  }
  const root = `---\nid: x\nname: X\nversion: "1"\nruntime:\n  id: r\n  agent:\n    history:\n      maxTurn: 1\ncontributes:\n  prompt:\n    - id: s\n      content: c\n---\nBody.`;
  const good = `---\nid: x\nname: X\nversion: "1"\ncontributes:\n  prompt:\n    - id: s\n      content: c\n---\nBody.`;

  it('PLUGIN.md: nested unknown keys at every level', () => {
    const dir = pluginDir({ 'PLUGIN.md': root });
    expect(() => loadPlugin(dir)).toThrow(`${join(dir, 'PLUGIN.md')}: runtime.agent.history.maxTurn: unknown key`);
    expect(() => parsePluginFile(`---\nid: x\nname: X\nversion: "1"\nentyr: a\n---\n`, 'P.md')).toThrow('P.md: entyr: unknown key');
    expect(() => parsePluginFile(`---\nid: x\nname: X\nversion: "1"\ncontributes:\n  promt: []\n---\n`, 'P.md')).toThrow(
      'P.md: contributes.promt: unknown key',
    );
  });

  it('a locale variant: unknown keys, an audience, and an id PLUGIN.md does not have', () => {
    const unknown = pluginDir({
      'PLUGIN.md': good,
      'PLUGIN.zh-Hans.md': `---\ncontributes:\n  prompt:\n    - id: s\n      content: 中\n      position: system\n---\n体`,
    });
    expect(() => loadPlugin(unknown)).toThrow(`${join(unknown, 'PLUGIN.zh-Hans.md')}: contributes.prompt.0.position: unknown key`);
    const audience = pluginDir({
      'PLUGIN.md': good,
      'PLUGIN.zh-Hans.md': `---\ncontributes:\n  prompt:\n    - id: s\n      content: 中\n      audience: story\n---\n体`,
    });
    expect(() => loadPlugin(audience)).toThrow(`${join(audience, 'PLUGIN.zh-Hans.md')}: contributes.prompt.0.audience: ${STATIC_AUDIENCE_MESSAGE}`);
    const stray = pluginDir({ 'PLUGIN.md': good, 'PLUGIN.zh-Hans.md': `---\ncontributes:\n  prompt:\n    - id: t\n      content: 中\n---\n体` });
    expect(() => loadPlugin(stray)).toThrow(`${join(stray, 'PLUGIN.zh-Hans.md')}: contributes.prompt.0.id: no static segment "t" in PLUGIN.md to translate`);
    const ok = loadPlugin(pluginDir({ 'PLUGIN.md': good, 'PLUGIN.zh-Hans.md': `---\ncontributes:\n  prompt:\n    - id: s\n      content: 中\n---\n体` }));
    expect(ok.staticSegments['zh-Hans']).toEqual([expect.objectContaining({ id: 's', content: '中' })]);
  });
});
