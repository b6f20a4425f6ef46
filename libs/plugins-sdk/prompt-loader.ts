import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { z } from 'zod';
import { EngineError } from '../errors';
import { BoundedMemo } from '../memo';
import { truncateText } from '../text';
import { canonicalLocaleTag } from './locale';

/**
 * Prompt templates kept as Markdown files, one per locale (spec §6): `<name>.md` (the default,
 * no language suffix), `<name>.en.md`, `<name>.zh-Hans.md`, …
 *
 * `load(name, locale)` tries, in order:
 *  1. exact: the file whose tag is the request's canonical tag (`zh-Hans-CN` → `<name>.zh-Hans-CN.md`);
 *  2. compatible: a file whose tag has the same language AND the same likely script
 *     (`Intl.Locale#maximize`), preferring `<language>-<Script>` then `<language>`, then any other
 *     (same likely region first, then by tag) — so `zh-CN` reads `zh-Hans`, `zh-TW` reads `zh-Hant`,
 *     and `zh-Hant` never reads `zh` or `zh-Hans` (whose script is Hans);
 *  3. English: `<name>.en.md`;
 *  4. the default file `<name>.md`.
 *
 * A locale that is not a well-formed BCP 47 tag (`../../etc/passwd`, `zh\0`, `en_US!!`, a non-string)
 * skips steps 1 and 2: it is never part of a path. Paths are never built from the tag anyway: the
 * loader lists its root and compares the tags of the files it finds. Everything is read from the
 * root directory only — no fallback to another directory, no subfolders, and a file that resolves
 * (through a symlink) outside the root is an error.
 */
export interface PromptLoader {
  /** The directory the loader reads (resolved, symlinks followed). */
  readonly root: string;
  /** The template's text for a locale, or null when no file of the fallback chain exists. */
  load(name: string, locale?: string | null): string | null;
  /** Like `load`, but a missing template throws a {@link PromptTemplateError} naming it and the paths tried. */
  loadOrThrow(name: string, locale?: string | null): string;
  /** Which file answers, and by which step of the fallback chain; null when none does. */
  resolve(name: string, locale?: string | null): ResolvedPrompt | null;
  /** The preferred files for a request, in the order tried (absolute paths): what an error names. */
  candidates(name: string, locale?: string | null): string[];
}

export interface ResolvedPrompt {
  name: string;
  /** Absolute path of the file read. */
  file: string;
  /** The locale suffix of that file, or null for the default file. */
  locale: string | null;
  match: 'exact' | 'compatible' | 'english' | 'default';
  /** The template text: a leading HTML comment (its documentation) removed, trimmed. */
  text: string;
}

export const PromptLoaderOptions = z
  .object({
    /**
     * Resolutions (name × locale → file and text) are remembered, at most this many (oldest
     * forgotten first): files are read once per loader. `false` reads the files on every call.
     * A loader belongs to one registry generation; create a new one to see edited files.
     */
    cache: z.union([z.literal(false), z.object({ maxEntries: z.number().int().positive() }).strict()]).default({ maxEntries: 256 }),
    /** A template larger than this is refused (an error naming the file). */
    maxTemplateBytes: z
      .number()
      .int()
      .positive()
      .default(1024 * 1024),
  })
  .strict();
export type PromptLoaderOptions = z.input<typeof PromptLoaderOptions>;

/** Template names: letters, digits, `-` and `_`, no dots or separators (`world-generation`). */
export const PROMPT_TEMPLATE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

export type PromptTemplateErrorCode = 'PROMPT_TEMPLATE_MISSING' | 'PROMPT_TEMPLATE_INVALID' | 'PROMPT_ROOT_INVALID';

/** A template that is missing, unreadable, misnamed or outside its root: a deployment fault. */
export class PromptTemplateError extends EngineError {
  readonly category = 'internal';
  constructor(
    readonly code: PromptTemplateErrorCode,
    message: string,
    readonly template: string | null = null,
    readonly tried: readonly string[] = [],
  ) {
    super(message);
  }
}

/** The repository's shared templates (`prompts/server`); `COVEL_PROMPTS_DIR` replaces it (libs/engine/config/config.ts). */
export const SHARED_PROMPTS_DIR = resolve(__dirname, '..', '..', 'prompts', 'server');

/**
 * The framework's shared loader (world generation, lore repair) over `root` — the engine passes
 * `config.promptsDir` (COVEL_PROMPTS_DIR, default {@link SHARED_PROMPTS_DIR}). It changes only this
 * root: a plugin's own `createPromptLoader(dir)` is unaffected and never falls back here.
 */
export function sharedPromptLoader(options: PromptLoaderOptions & { root?: string } = {}): PromptLoader {
  const { root = SHARED_PROMPTS_DIR, ...rest } = options;
  return createPromptLoader(root, rest);
}

interface Wanted {
  /** Canonical tag, or null when the locale was absent or invalid. */
  tag: string | null;
  language: string | null;
  script: string | null;
  region: string | null;
}

function wantedOf(locale: unknown): Wanted {
  const tag = typeof locale === 'string' ? canonicalLocaleTag(locale) : null;
  if (tag === null) return { tag: null, language: null, script: null, region: null };
  const likely = new Intl.Locale(tag).maximize();
  return { tag, language: likely.language, script: likely.script ?? null, region: likely.region ?? null };
}

interface VariantFile {
  file: string;
  /** Canonical tag of the suffix. */
  tag: string;
  language: string;
  script: string | null;
  region: string | null;
}

/** A standalone loader over one directory; see {@link PromptLoader} for the fallback order. */
export function createPromptLoader(root: string, options: PromptLoaderOptions = {}): PromptLoader {
  const opts = PromptLoaderOptions.parse(options);
  let realRoot: string;
  try {
    realRoot = realpathSync(resolve(root));
    if (!statSync(realRoot).isDirectory()) throw new Error('not a directory');
  } catch (error) {
    throw new PromptTemplateError('PROMPT_ROOT_INVALID', `prompt root ${resolve(root)} is not a readable directory: ${String(error)}`);
  }
  const cache = new BoundedMemo<string, ResolvedPrompt | null>({ maxEntries: opts.cache === false ? 1 : opts.cache.maxEntries });

  const checkName = (name: unknown): string => {
    if (typeof name !== 'string' || !PROMPT_TEMPLATE_NAME.test(name)) {
      throw new PromptTemplateError('PROMPT_TEMPLATE_INVALID', `prompt template name ${JSON.stringify(name)} is not a plain name (letters, digits, - and _)`);
    }
    return name;
  };

  /** The files `<name>.<tag>.md` in the root whose suffix is a well-formed tag. */
  const variantsOf = (name: string): VariantFile[] => {
    const prefix = `${name}.`;
    const variants: VariantFile[] = [];
    for (const entry of readdirSync(realRoot)) {
      if (!entry.startsWith(prefix) || !entry.endsWith('.md')) continue;
      const suffix = entry.slice(prefix.length, -'.md'.length);
      const tag = suffix.includes('.') ? null : canonicalLocaleTag(suffix);
      if (tag === null) continue;
      const likely = new Intl.Locale(tag).maximize();
      variants.push({ file: join(realRoot, entry), tag, language: likely.language, script: likely.script ?? null, region: likely.region ?? null });
    }
    return variants;
  };

  /** Reads a file of the root, or null when it does not exist; refuses one that leaves the root. */
  const readInRoot = (name: string, file: string): string | null => {
    let real: string;
    try {
      real = realpathSync(file);
    } catch {
      return null;
    }
    const rel = relative(realRoot, real);
    if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
      throw new PromptTemplateError('PROMPT_TEMPLATE_INVALID', `prompt template ${file} resolves outside its root ${realRoot}`, name);
    }
    const stat = statSync(real);
    if (!stat.isFile()) return null;
    if (stat.size > opts.maxTemplateBytes) {
      throw new PromptTemplateError('PROMPT_TEMPLATE_INVALID', `prompt template ${file} is ${stat.size} bytes, more than ${opts.maxTemplateBytes}`, name);
    }
    return readFileSync(real, 'utf8');
  };

  const preferred = (name: string, wanted: Wanted): { tag: string | null; match: ResolvedPrompt['match'] }[] => {
    const list: { tag: string | null; match: ResolvedPrompt['match'] }[] = [];
    if (wanted.tag !== null && wanted.language !== null) {
      list.push({ tag: wanted.tag, match: 'exact' });
      if (wanted.script !== null) list.push({ tag: `${wanted.language}-${wanted.script}`, match: 'compatible' });
      // the bare language only when its own likely script is the requested one (zh is Hans: not for zh-Hant)
      const bare = canonicalLocaleTag(wanted.language);
      if (bare !== null && new Intl.Locale(bare).maximize().script === wanted.script) list.push({ tag: bare, match: 'compatible' });
    }
    list.push({ tag: 'en', match: 'english' }, { tag: null, match: 'default' });
    const seen = new Set<string>();
    return list.filter((c) => {
      const key = c.tag ?? '';
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  };

  const fileOf = (name: string, tag: string | null) => join(realRoot, tag === null ? `${name}.md` : `${name}.${tag}.md`);

  const resolveUncached = (name: string, wanted: Wanted): ResolvedPrompt | null => {
    const variants = variantsOf(name);
    const found = (file: string, tag: string | null, match: ResolvedPrompt['match']): ResolvedPrompt | null => {
      const raw = readInRoot(name, file);
      return raw === null ? null : { name, file, locale: tag, match, text: templateText(raw) };
    };
    const byTag = new Map(variants.map((v) => [v.tag, v]));
    const order = preferred(name, wanted);
    // 1. exact
    const exact = wanted.tag !== null ? byTag.get(wanted.tag) : undefined;
    if (exact) {
      const hit = found(exact.file, exact.tag, 'exact');
      if (hit) return hit;
    }
    // 2. compatible: same language and likely script; the main forms first, then the others
    if (wanted.tag !== null && wanted.language !== null) {
      const rank = new Map(order.filter((c) => c.match === 'compatible').map((c, n) => [c.tag, n]));
      const compatible = variants
        .filter((v) => v.tag !== wanted.tag && v.language === wanted.language && v.script === wanted.script)
        .sort(
          (a, b) =>
            (rank.get(a.tag) ?? rank.size) - (rank.get(b.tag) ?? rank.size) ||
            Number(b.region === wanted.region) - Number(a.region === wanted.region) ||
            (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0),
        );
      for (const v of compatible) {
        const hit = found(v.file, v.tag, 'compatible');
        if (hit) return hit;
      }
    }
    // 3. English, 4. the default file
    const english = byTag.get('en');
    if (english) {
      const hit = found(english.file, 'en', 'english');
      if (hit) return hit;
    }
    return found(fileOf(name, null), null, 'default');
  };

  const loader: PromptLoader = {
    root: realRoot,
    resolve(name, locale) {
      const checked = checkName(name);
      const wanted = wantedOf(locale);
      if (opts.cache === false) return resolveUncached(checked, wanted);
      const key = `${checked}\u0000${wanted.tag ?? ''}`;
      if (cache.has(key)) return cache.get(key) ?? null;
      const result = resolveUncached(checked, wanted);
      cache.set(key, result);
      return result;
    },
    load(name, locale) {
      return loader.resolve(name, locale)?.text ?? null;
    },
    loadOrThrow(name, locale) {
      const hit = loader.resolve(name, locale);
      if (hit) return hit.text;
      const tried = loader.candidates(name, locale);
      const wanted = wantedOf(locale);
      const also = wanted.tag !== null && wanted.script !== null ? ` (and any ${name}.<tag>.md of language ${wanted.language}, script ${wanted.script})` : '';
      throw new PromptTemplateError(
        'PROMPT_TEMPLATE_MISSING',
        `prompt template "${name}" not found for locale ${JSON.stringify(typeof locale === 'string' ? truncateText(locale, 64) : null)} in ${realRoot}; tried ${tried.join(', ')}${also}`,
        name,
        tried,
      );
    },
    candidates(name, locale) {
      const checked = checkName(name);
      return preferred(checked, wantedOf(locale)).map((c) => fileOf(checked, c.tag));
    },
  };
  return loader;
}

/** A template's text: a leading BOM and a leading HTML comment (the template's own documentation) removed, trimmed. */
export function templateText(raw: string): string {
  return raw
    .replace(/^\uFEFF/, '')
    .replace(/^\s*<!--[\s\S]*?-->/, '')
    .trim();
}
