import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPromptLoader, SHARED_PROMPTS_DIR, sharedPromptLoader } from '../../../plugins-sdk';
import { loadConfig } from '../config';
import { promptDirs } from '../../../../test/support/prompt-dirs';

const { dirWith } = promptDirs();

describe('COVEL_PROMPTS_DIR replaces only the shared root', () => {
  it('is read once with the engine config: default prompts/server, an empty value is unset', () => {
    expect(loadConfig({}).promptsDir).toBe(SHARED_PROMPTS_DIR);
    expect(loadConfig({ COVEL_PROMPTS_DIR: '' }).promptsDir).toBe(SHARED_PROMPTS_DIR);
    expect(SHARED_PROMPTS_DIR).toMatch(/prompts[/\\]server$/);
    const dir = dirWith('custom', ['default']);
    expect(loadConfig({ COVEL_PROMPTS_DIR: dir }).promptsDir).toBe(dir);
  });

  it('the shared loader reads the replacement; a plugin loader keeps its own directory', () => {
    const custom = dirWith('custom', ['default', 'zh-Hans'], 'world-generation');
    writeFileSync(join(custom, 'world-generation.md'), 'CUSTOM');
    const plugin = dirWith('plugin', ['en'], 'summary');
    const config = loadConfig({ COVEL_PROMPTS_DIR: custom });

    const shared = sharedPromptLoader({ root: config.promptsDir });
    expect(shared.load('world-generation', 'en')).toBe('CUSTOM');
    expect(shared.load('world-generation', 'zh-CN')).toBe('zh-Hans');
    expect(shared.load('lore-repair', 'en')).toBeNull(); // replaced, not merged with the repository's

    const own = createPromptLoader(plugin);
    expect(own.root).not.toBe(shared.root);
    expect(own.load('summary', 'en')).toBe('en');
    expect(own.load('world-generation', 'en')).toBeNull();

    // without the variable: the repository's templates
    const repository = sharedPromptLoader({ root: loadConfig({}).promptsDir });
    expect(repository.load('world-generation', 'en')).toContain('You design worlds');
    expect(sharedPromptLoader().load('lore-repair', 'zh-CN')).toContain('连续性编辑');
  });
});
