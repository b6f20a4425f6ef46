import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SHARED_PROMPTS_DIR, sharedPromptLoader, templateText } from '..';

/** The shared templates and the locales each must have (spec §6: English and Simplified Chinese). */
const TEMPLATES = ['world-generation', 'lore-repair'];
const FILES = (name: string) => ({ en: join(SHARED_PROMPTS_DIR, `${name}.md`), 'zh-Hans': join(SHARED_PROMPTS_DIR, `${name}.zh-Hans.md`) });

const PLACEHOLDER = /\{\{\s*([^{}\s]+)\s*\}\}/g;
const placeholders = (text: string) => new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1]));
/** The placeholders the leading comment documents: a line that starts with `{{ name }}`. */
function documented(raw: string): Set<string> {
  const comment = /^\s*<!--([\s\S]*?)-->/.exec(raw);
  expect(comment).not.toBeNull();
  return new Set([...comment![1].matchAll(/^\s*\{\{\s*([^{}\s]+)\s*\}\}/gm)].map((m) => m[1]));
}
const sorted = (s: Set<string>) => [...s].sort();

describe.each(TEMPLATES)('prompts/server/%s', (name) => {
  const files = FILES(name);
  const raw = { en: readFileSync(files.en, 'utf8'), 'zh-Hans': readFileSync(files['zh-Hans'], 'utf8') };

  it('exists in English (the default file) and Simplified Chinese', () => {
    expect(existsSync(files.en)).toBe(true);
    expect(existsSync(files['zh-Hans'])).toBe(true);
    expect(raw['zh-Hans']).toMatch(/[\u4e00-\u9fff]/);
    expect(templateText(raw.en)).not.toMatch(/[\u4e00-\u9fff]/);
  });

  it('uses the same placeholders in both locales, each documented at the top and used in the body', () => {
    const en = placeholders(templateText(raw.en));
    const zh = placeholders(templateText(raw['zh-Hans']));
    expect(en.size).toBeGreaterThan(0);
    expect(sorted(zh)).toEqual(sorted(en));
    expect(sorted(documented(raw.en))).toEqual(sorted(en));
    expect(sorted(documented(raw['zh-Hans']))).toEqual(sorted(en));
  });

  it('keeps the same data blocks (tag names are not translated)', () => {
    const tags = (text: string) => sorted(new Set([...templateText(text).matchAll(/^<([a-z][a-z-]*)>$/gm)].map((m) => m[1])));
    expect(tags(raw['zh-Hans'])).toEqual(tags(raw.en));
    expect(tags(raw.en).length).toBeGreaterThan(0);
  });

  it('the shared loader serves the Chinese file to Simplified Chinese sessions and English to the others', () => {
    const loader = sharedPromptLoader();
    for (const locale of ['zh-Hans', 'zh-CN', 'zh', 'zh-SG', 'zh-Hans-CN']) expect(loader.loadOrThrow(name, locale)).toBe(templateText(raw['zh-Hans']));
    for (const locale of ['en', 'en-GB', 'fr', 'zh-TW', 'zh-Hant', '../../etc/passwd']) expect(loader.loadOrThrow(name, locale)).toBe(templateText(raw.en));
    expect(loader.loadOrThrow(name, 'en')).not.toContain('<!--');
  });
});

describe('what the templates ask for', () => {
  const both = (name: string) => [readFileSync(FILES(name).en, 'utf8'), readFileSync(FILES(name)['zh-Hans'], 'utf8')].map(templateText);

  it('world generation: a world with name, description, tags, lore, characters, seats and dimensions with schemas', () => {
    for (const text of both('world-generation')) {
      for (const field of [
        'name',
        'description',
        'tags',
        'lore',
        'characters',
        'type',
        'fields',
        'characterSchema',
        'seats',
        'primary: true',
        'dimensions',
        'schema',
        'value',
        'entries',
        'keys',
      ]) {
        expect(text).toContain(`\`${field}\``);
      }
      expect(text).toContain('{{ maxCharacters }}');
      expect(text).toMatch(/<world-brief>\n\{\{ brief \}\}\n<\/world-brief>/);
    }
  });

  it('lore repair: the whole lore back, consistent, marker lines unchanged', () => {
    const [en, zh] = both('lore-repair');
    expect(en).toMatch(/marker line/);
    expect(en).toMatch(/exactly as written/);
    expect(zh).toMatch(/标记行/);
    for (const text of [en, zh]) expect(text).toMatch(/<world-lore>\n\{\{ world\.lore \}\}\n<\/world-lore>/);
  });
});
