import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPromptLoader, PromptTemplateError, sharedPromptLoader } from '..';
import { promptDirs } from '../../../test/support/prompt-dirs';

const prompts = promptDirs();
const dirWith = prompts.dirWith;

function thrown(f: () => unknown): PromptTemplateError {
  try {
    f();
  } catch (error) {
    expect(error).toBeInstanceOf(PromptTemplateError);
    return error as PromptTemplateError;
  }
  throw new Error('did not throw');
}

describe('createPromptLoader: the fallback order (spec §6)', () => {
  const all = ['default', 'en', 'zh-Hans', 'zh-Hans-SG', 'zh-Hant', 'pt', 'pt-BR', 'sr-Latn'];

  it.each([
    // 1. exact
    ['zh-Hans-SG', 'zh-Hans-SG', 'exact'],
    ['zh-hans-sg', 'zh-Hans-SG', 'exact'],
    ['pt-BR', 'pt-BR', 'exact'],
    ['en', 'en', 'exact'],
    // 2. the main language of the same writing system
    ['zh-Hans-CN', 'zh-Hans', 'compatible'],
    ['zh-CN', 'zh-Hans', 'compatible'],
    ['zh', 'zh-Hans', 'compatible'],
    ['cmn', 'zh-Hans', 'compatible'],
    ['zh-CN-u-nu-hanidec', 'zh-Hans', 'compatible'],
    ['zh-TW', 'zh-Hant', 'compatible'],
    ['zh-HK', 'zh-Hant', 'compatible'],
    ['zh-Hant-TW', 'zh-Hant', 'compatible'],
    ['pt-PT', 'pt', 'compatible'],
    ['sr-Latn-RS', 'sr-Latn', 'compatible'],
    ['en-GB', 'en', 'compatible'],
    // 3. English
    ['fr', 'en', 'english'],
    ['ja', 'en', 'english'],
    ['sr', 'en', 'english'], // sr is Cyrillic: sr-Latn is another writing system
    ['zh-Latn', 'en', 'english'],
    ['yue', 'en', 'english'], // another language, even in Hant
  ])('%s reads x.%s.md (%s)', (locale, suffix, match) => {
    const loader = createPromptLoader(dirWith('all', all));
    const hit = loader.resolve('x', locale);
    expect(hit).toMatchObject({ locale: suffix, match, text: suffix });
    expect(loader.load('x', locale)).toBe(suffix);
    expect(loader.loadOrThrow('x', locale)).toBe(suffix);
  });

  it('falls back to English, then to the default file, then to nothing', () => {
    const dir = dirWith('steps', ['default', 'en', 'zh-Hans']);
    expect(createPromptLoader(dir).load('x', 'fr')).toBe('en');
    rmSync(join(dir, 'x.en.md'));
    expect(createPromptLoader(dir).resolve('x', 'fr')).toMatchObject({ locale: null, match: 'default', text: 'default' });
    expect(createPromptLoader(dir).load('x', 'zh-CN')).toBe('zh-Hans');
    rmSync(join(dir, 'x.md'));
    expect(createPromptLoader(dir).load('x', 'fr')).toBeNull();
    expect(createPromptLoader(dir).load('x', 'zh-TW')).toBeNull();
  });

  it('zh-Hant never reads simplified zh or zh-Hans; simplified reads zh', () => {
    const hans = createPromptLoader(dirWith('hans', ['default', 'zh-Hans']));
    const zh = createPromptLoader(dirWith('zh', ['en', 'zh']));
    for (const traditional of ['zh-Hant', 'zh-TW', 'zh-HK', 'zh-MO', 'zh-Hant-CN']) {
      expect(hans.load('x', traditional)).toBe('default');
      expect(zh.load('x', traditional)).toBe('en');
    }
    for (const simplified of ['zh-Hans', 'zh-Hans-CN', 'zh-CN', 'zh-SG', 'zh']) expect(zh.load('x', simplified)).toBe('zh');
    // and simplified never reads zh-Hant
    expect(createPromptLoader(dirWith('hant', ['en', 'zh-Hant'])).load('x', 'zh-CN')).toBe('en');
  });

  it('among several compatible files: language-Script, then language, then the same likely region, then by tag', () => {
    expect(createPromptLoader(dirWith('a', ['en', 'zh-Hans-CN', 'zh-Hans-SG'])).resolve('x', 'zh-SG')).toMatchObject({
      locale: 'zh-Hans-SG',
      match: 'compatible',
    });
    expect(createPromptLoader(dirWith('b', ['en', 'zh-Hans-CN', 'zh-Hans-SG'])).load('x', 'zh-MY')).toBe('zh-Hans-CN');
    expect(createPromptLoader(dirWith('c', ['en', 'zh-Hans-SG', 'zh'])).load('x', 'zh-SG')).toBe('zh');
    expect(createPromptLoader(dirWith('d', ['en', 'zh', 'zh-Hans'])).load('x', 'zh-SG')).toBe('zh-Hans');
    expect(createPromptLoader(dirWith('e', ['en', 'pt-BR'])).load('x', 'pt-PT')).toBe('pt-BR');
  });

  it('a missing template is null from load and a clear error from loadOrThrow, naming it and the paths tried', () => {
    const dir = dirWith('empty', []);
    const loader = createPromptLoader(dir);
    expect(loader.load('world-generation', 'zh-CN')).toBeNull();
    const error = thrown(() => loader.loadOrThrow('world-generation', 'zh-CN'));
    expect(error.code).toBe('PROMPT_TEMPLATE_MISSING');
    expect(error.template).toBe('world-generation');
    expect(error.tried).toEqual(['zh-CN', 'zh-Hans', 'zh', 'en', null].map((t) => join(loader.root, t ? `world-generation.${t}.md` : 'world-generation.md')));
    expect(error.message).toContain('prompt template "world-generation" not found for locale "zh-CN"');
    for (const path of error.tried) expect(error.message).toContain(path);
    expect(error.message).toContain('language zh, script Hans');
    // a hostile locale is quoted, cut short, in the message; the paths are English and default only
    const hostile = thrown(() => loader.loadOrThrow('x', `../${'é'.repeat(1_000_000)}`));
    expect(hostile.message.length).toBeLessThan(1_000);
    expect(hostile.tried).toEqual([join(loader.root, 'x.en.md'), join(loader.root, 'x.md')]);
    // zh-Hant's main forms: never the bare zh (Hans)
    expect(loader.candidates('x', 'zh-TW').map((p) => p.slice(loader.root.length + 1))).toEqual(['x.zh-TW.md', 'x.zh-Hant.md', 'x.en.md', 'x.md']);
  });

  it('strips a leading BOM and HTML comment (the template documentation) and trims', () => {
    const dir = dirWith('doc', []);
    writeFileSync(join(dir, 'x.md'), '\uFEFF<!--\n  {{ brief }}: the idea\n-->\n\nHello {{ brief }}.\n<!-- kept -->\n');
    expect(createPromptLoader(dir).load('x')).toBe('Hello {{ brief }}.\n<!-- kept -->');
  });
});

describe('createPromptLoader: locales and names never reach a path', () => {
  const hostile = [
    '../../etc/passwd',
    'en/../../x',
    '..',
    '../en',
    'zh\u0000',
    'zh-Hans\u0000/../../secret',
    'en\\..\\..\\x',
    '/etc/passwd',
    'en_US!!',
    'zh-Hans.md',
    'x-private',
    '',
    ' en',
    'e'.repeat(300),
  ];

  it.each(hostile.map((h) => [h]))('locale %j is invalid: English, then default; no path from it', (locale) => {
    const root = dirWith('root', ['default', 'en', 'zh-Hans']);
    writeFileSync(join(prompts.base(), 'passwd.md'), 'SECRET');
    writeFileSync(join(prompts.base(), 'x.md'), 'SECRET');
    writeFileSync(join(root, 'x.en_US!!.md'), 'SECRET'); // an ill-formed suffix is no locale file
    const loader = createPromptLoader(root);
    expect(loader.resolve('x', locale)).toMatchObject({ match: 'english', text: 'en' });
    expect(loader.candidates('x', locale)).toEqual([join(loader.root, 'x.en.md'), join(loader.root, 'x.md')]);
    rmSync(join(root, 'x.en.md'));
    expect(createPromptLoader(root).resolve('x', locale)).toMatchObject({ match: 'default', text: 'default' });
  });

  it('a locale that is not a string is no locale', () => {
    const loader = createPromptLoader(dirWith('root', ['default', 'en']));
    expect(loader.load('x')).toBe('en');
    expect(loader.load('x', null)).toBe('en');
    expect(loader.load('x', 42 as unknown as string)).toBe('en');
    expect(loader.load('x', { toString: () => '../../x' } as unknown as string)).toBe('en');
  });

  it.each([['../x'], ['x/y'], ['/etc/passwd'], ['x.en'], ['.x'], [''], ['x\u0000'], ['..'], ['x y'], ['a'.repeat(129)]])(
    'template name %j is refused',
    (name) => {
      const loader = createPromptLoader(dirWith('root', ['default']));
      for (const call of [() => loader.load(name, 'en'), () => loader.loadOrThrow(name, 'en'), () => loader.candidates(name, 'en')]) {
        const error = thrown(call);
        expect(error.code).toBe('PROMPT_TEMPLATE_INVALID');
        expect(error.message).toContain(JSON.stringify(name));
      }
    },
  );
});

describe('a standalone loader stays in its own directory', () => {
  it('never falls back to the shared root or a parent directory', () => {
    const shared = dirWith('shared', ['default', 'en', 'zh-Hans'], 'world-generation');
    const plugin = dirWith('plugin/prompts/server', ['en'], 'summary');
    writeFileSync(join(prompts.base(), 'plugin', 'world-generation.md'), 'PARENT');
    const own = createPromptLoader(plugin);
    expect(own.load('summary', 'zh-CN')).toBe('en');
    expect(own.load('world-generation', 'en')).toBeNull();
    const error = thrown(() => own.loadOrThrow('world-generation', 'zh-CN'));
    for (const path of error.tried) expect(path.startsWith(own.root + '/')).toBe(true);
    expect(sharedPromptLoader({ root: shared }).load('world-generation', 'zh-CN')).toBe('zh-Hans');
  });

  it('refuses a file that a symlink takes outside the root, and reads one that stays inside', () => {
    const root = dirWith('root', ['default']);
    writeFileSync(join(prompts.base(), 'outside.md'), 'SECRET');
    symlinkSync(join(prompts.base(), 'outside.md'), join(root, 'x.en.md'));
    const error = thrown(() => createPromptLoader(root).load('x', 'en'));
    expect(error.code).toBe('PROMPT_TEMPLATE_INVALID');
    expect(error.message).toMatch(/x\.en\.md resolves outside its root/);
    expect(error.message).not.toContain('SECRET');

    const inside = dirWith('inside', ['default']);
    mkdirSync(join(inside, 'shared'));
    writeFileSync(join(inside, 'shared', 'body.md'), 'INSIDE');
    symlinkSync(join(inside, 'shared', 'body.md'), join(inside, 'x.zh-Hans.md'));
    expect(createPromptLoader(inside).load('x', 'zh-CN')).toBe('INSIDE');
  });

  it('a root reached through a symlink is its real directory', () => {
    const real = dirWith('real', ['en']);
    symlinkSync(real, join(prompts.base(), 'link'));
    expect(createPromptLoader(join(prompts.base(), 'link')).load('x', 'en')).toBe('en');
  });

  it('a directory named like a template is not a template', () => {
    const root = dirWith('root', ['default']);
    mkdirSync(join(root, 'x.en.md'));
    expect(createPromptLoader(root).load('x', 'en')).toBe('default');
  });

  it('refuses a root that is not a directory, and a template over the size limit', () => {
    expect(thrown(() => createPromptLoader(join(prompts.base(), 'nope'))).code).toBe('PROMPT_ROOT_INVALID');
    writeFileSync(join(prompts.base(), 'file'), '');
    expect(thrown(() => createPromptLoader(join(prompts.base(), 'file'))).code).toBe('PROMPT_ROOT_INVALID');
    const root = dirWith('big', []);
    writeFileSync(join(root, 'x.md'), 'y'.repeat(101));
    const error = thrown(() => createPromptLoader(root, { maxTemplateBytes: 100 }).load('x', 'en'));
    expect(error.message).toMatch(/101 bytes, more than 100/);
    expect(createPromptLoader(root, { maxTemplateBytes: 101 }).load('x', 'en')).toHaveLength(101);
  });
});

describe('caching', () => {
  it('reads each resolution once per loader; cache: false reads every time', () => {
    const root = dirWith('root', ['en']);
    const cached = createPromptLoader(root);
    const uncached = createPromptLoader(root, { cache: false });
    expect(cached.load('x', 'en')).toBe('en');
    expect(uncached.load('x', 'en')).toBe('en');
    writeFileSync(join(root, 'x.en.md'), 'edited');
    writeFileSync(join(root, 'x.zh-Hans.md'), 'zh-Hans');
    expect(cached.load('x', 'en')).toBe('en');
    expect(cached.load('x', 'zh-CN')).toBe('zh-Hans'); // another key: resolved now
    expect(uncached.load('x', 'en')).toBe('edited');
    expect(createPromptLoader(root).load('x', 'en')).toBe('edited'); // a new generation sees the edit
  });

  it('is bounded: the oldest resolution is forgotten first; invalid locales share one entry', () => {
    const root = dirWith('root', ['en', 'default']);
    const loader = createPromptLoader(root, { cache: { maxEntries: 2 } });
    expect(loader.load('x', 'en')).toBe('en');
    for (const hostile of ['../a', '../b', '../c']) expect(loader.load('x', hostile)).toBe('en'); // one key: no locale
    writeFileSync(join(root, 'x.en.md'), 'edited');
    expect(loader.load('x', 'en')).toBe('en'); // still cached: two keys so far
    expect(loader.load('x', 'fr')).toBe('edited'); // a third key: 'en' is forgotten
    expect(loader.load('x', 'en')).toBe('edited');
  });

  it('validates its options', () => {
    const root = dirWith('root', ['en']);
    expect(() => createPromptLoader(root, { cache: { maxEntries: 0 } })).toThrow();
    expect(() => createPromptLoader(root, { maxTemplateBytes: -1 })).toThrow();
    expect(() => createPromptLoader(root, { extra: true } as never)).toThrow();
  });
});
