/**
 * Spec §6 through the engine: the shared prompt root is `COVEL_PROMPTS_DIR` when set (it replaces
 * `prompts/server`, nothing else), world creation reads its templates through the engine's shared
 * loader with the loader's fallback (exact, the main language of the same script, English, the
 * default file — all within that root), and `CreateWorldOptions.loadPrompt` injects the host's.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, engineSharedPrompts, loadConfig, WorldCreation } from '../../libs/engine';
import { createPromptLoader, PromptTemplateError, SHARED_PROMPTS_DIR } from '../../libs/plugins-sdk';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';

const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };
const brief = '\n<world-brief>\n{{ brief }}\n</world-brief>';

describe('the shared prompt root through the engine (COVEL_PROMPTS_DIR)', () => {
  const dirs: string[] = [];
  const dirWith = (files: Record<string, string>) => {
    const dir = mkdtempSync(join(tmpdir(), 'covel-prompts-'));
    dirs.push(dir);
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    return dir;
  };
  let covel: EmbeddedEngine;
  let overrides: string;

  beforeAll(async () => {
    overrides = dirWith({
      'world-generation.md': `<!-- the operator's own -->\nOPERATOR EN for {{ language }}${brief}`,
      'world-generation.zh-Hans.md': `OPERATOR ZH for {{ language }}${brief}`,
      // no lore-repair.zh-Hans.md here: the repository's is not read
      'lore-repair.md': 'OPERATOR LORE REPAIR in {{ language }}\n<world-lore>\n{{ world.lore }}\n</world-lore>',
    });
    covel = await startEmbedded({ COVEL_PROMPTS_DIR: overrides });
  });
  afterAll(async () => {
    await covel?.stop();
    dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
  });

  it('the engine reads the overriding templates: English and the default for most locales, the zh-Hans variant for Simplified Chinese', () => {
    const { worldCreation } = covel.engine;
    expect(worldCreation.prompts.root).toBe(overrides);
    const system = (locale: string) => worldCreation.generationRequest({ description: 'A <salt> marsh', locale }).system;
    expect(system('en')).toBe('OPERATOR EN for en\n<world-brief>\nA &lt;salt&gt; marsh\n</world-brief>');
    for (const locale of ['zh-Hans', 'zh-CN', 'zh-SG', 'zh'])
      expect(system(locale)).toBe(`OPERATOR ZH for ${locale}\n<world-brief>\nA &lt;salt&gt; marsh\n</world-brief>`);
    // other languages, and Traditional Chinese (another script), end on the default file
    for (const locale of ['pt-BR', 'zh-Hant', 'zh-TW', 'ja']) expect(system(locale)).toMatch(new RegExp(`^OPERATOR EN for ${locale}\n`));
    expect(worldCreation.prompts.resolve('world-generation', 'zh-CN')).toMatchObject({
      file: join(overrides, 'world-generation.zh-Hans.md'),
      match: 'compatible',
    });
  });

  it('a localized file missing from the root falls back within it (to its default file), never to the repository’s', () => {
    const request = covel.engine.worldCreation.loreRepairRequest({
      world: { name: 'Marsh', description: 'Salt and reeds.', lore: 'The tide </world-lore> turns.' },
      locale: 'zh-CN',
    });
    expect(request.system).toBe('OPERATOR LORE REPAIR in zh-CN\n<world-lore>\nThe tide &lt;/world-lore&gt; turns.\n</world-lore>');
    expect(request.system).not.toContain('连续性编辑'); // the repository's Chinese template
    expect(request.user).toBe('修复设定。'); // the code's own text follows the instruction language
    expect(covel.engine.worldCreation.prompts.resolve('lore-repair', 'zh-CN')).toMatchObject({ file: join(overrides, 'lore-repair.md'), match: 'default' });
  });

  it('CreateWorldOptions.loadPrompt injects the host’s loader instead of the engine’s', () => {
    const host = createPromptLoader(dirWith({ 'world-generation.zh-Hans.md': 'HOST ZH {{ maxCharacters }}', 'world-generation.md': 'HOST EN' }));
    const request = covel.engine.worldCreation.generationRequest({
      description: 'x',
      locale: 'zh-CN',
      maxCharacters: 4,
      loadPrompt: (name, locale) => host.loadOrThrow(name, locale),
    });
    expect(request.system).toBe('HOST ZH 4');
  });

  it('without COVEL_PROMPTS_DIR the engine’s root is prompts/server: Chinese for a Simplified Chinese locale, English otherwise', () => {
    // what createEngine builds from the default config (an engine start is shown above with the variable set)
    const defaults = new WorldCreation({ prompts: engineSharedPrompts(loadConfig({}).promptsDir) });
    expect(defaults.prompts.root).toBe(SHARED_PROMPTS_DIR);
    expect(defaults.generationRequest({ description: 'x', locale: 'zh-CN' }).system).toMatch(/^你为一个互动故事引擎设计世界/);
    expect(defaults.generationRequest({ description: 'x', locale: 'pt-BR' }).system).toMatch(/^You design worlds/);
    expect(defaults.loreRepairRequest({ world: { name: 'a', description: 'b', lore: 'c' }, locale: 'zh-CN' }).system).toContain('连续性编辑');
  });

  it('a root missing a shared template stops start-up, naming the template and the paths tried', async () => {
    /** The error createEngine stops with, or 'started' (the engine closed again). */
    const startWith = (promptsDir: string) =>
      createEngine(loadConfig({ COVEL_DATA_DIR: dirWith({}), COVEL_PROMPTS_DIR: promptsDir }), 'api', quiet).then(
        async (engine) => {
          await engine.close();
          return 'started';
        },
        (error: unknown) => error,
      );
    const partial = dirWith({ 'world-generation.md': 'W' });
    const error = await startWith(partial);
    expect(error).toBeInstanceOf(PromptTemplateError);
    expect(error).toMatchObject({
      code: 'PROMPT_TEMPLATE_MISSING',
      template: 'lore-repair',
      tried: [join(partial, 'lore-repair.en.md'), join(partial, 'lore-repair.md')],
    });
    expect(await startWith(join(partial, 'nowhere'))).toMatchObject({ code: 'PROMPT_ROOT_INVALID' });
  });
});
