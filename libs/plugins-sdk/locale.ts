import type { Locale } from './manifest';

import { BoundedMemo } from '../memo';
import { canonicalLocaleTag, MAX_LOCALE_TAG_LENGTH } from '../text';

export { canonicalLocaleTag, MAX_LOCALE_TAG_LENGTH };

/**
 * The locale of prompts and plugin variant files for a session's language tag (spec §6): a
 * Simplified Chinese session reads Chinese, every other session reads English. "Simplified
 * Chinese" is Chinese whose likely script is Hans (CLDR likely subtags: zh, zh-CN, zh-SG, zh-MY,
 * zh-Hans-*); zh-TW, zh-HK, zh-MO and zh-Hant-* are Traditional and read English.
 */
export function promptLocaleOf(tag: string): Locale {
  let locale = promptLocales.get(tag);
  if (locale === undefined) {
    locale = promptLocaleOfTag(tag);
    if (tag.length <= MAX_LOCALE_TAG_LENGTH) promptLocales.set(tag, locale);
  }
  return locale;
}

/**
 * `promptLocaleOf`'s answers by tag: a worker asks once per request built (each turn, twice), and
 * ICU's canonicalization and likely subtags cost more than the rest of the session settings read
 * (issue 33: ~1 % of a worker's CPU per narrator turn). A tag's answer never changes (for a given
 * ICU); the latest tags are kept, at most {@link PROMPT_LOCALES_KEPT} (the oldest one goes), and
 * only tags of at most `MAX_LOCALE_TAG_LENGTH` characters (a longer one is ill-formed: `en`).
 */
export const PROMPT_LOCALES_KEPT = 256;
const promptLocales = new BoundedMemo<string, Locale>({ maxEntries: PROMPT_LOCALES_KEPT });

function promptLocaleOfTag(tag: string): Locale {
  const canonical = canonicalLocaleTag(tag);
  if (canonical === null) return 'en';
  const likely = new Intl.Locale(canonical).maximize();
  return likely.language === 'zh' && likely.script === 'Hans' ? 'zh-Hans' : 'en';
}

/** The language each instruction language names plainly (the [LANGUAGE] block of a session in that language itself). */
const PLAIN_NAMES: Readonly<Record<Locale, { likely: string; name: string }>> = {
  en: { likely: 'en-Latn-US', name: 'English' },
  'zh-Hans': { likely: 'zh-Hans-CN', name: '简体中文' },
};

/**
 * How the [LANGUAGE] block names a session's language (spec §3), in the session's instruction
 * language (`promptLocaleOf`): the CLDR name from `Intl.DisplayNames` with the tag, e.g.
 * `Brazilian Portuguese (pt-BR)`, `Serbian (Latin, sr-Latn)`; in Chinese `中文（简体，新加坡，zh-SG）`.
 * A session in the instruction language itself (en, en-US; zh, zh-CN, zh-Hans) reads the plain
 * name `English` / `简体中文`; a Chinese tag without a script is named with its likely script
 * (zh-TW → Chinese (Traditional, Taiwan)); a tag CLDR has no name for is named by the tag alone.
 * Deterministic for a given ICU: the session records the result at creation
 * (`session.created@1` `languageName`), so its block's bytes never change afterwards.
 */
export function languageNameOf(tag: string): string {
  const instruction = promptLocaleOf(tag);
  const canonical = canonicalLocaleTag(tag);
  if (canonical === null) return PLAIN_NAMES[instruction].name;
  const locale = new Intl.Locale(canonical);
  const likely = locale.maximize();
  if (likely.baseName === PLAIN_NAMES[instruction].likely) return PLAIN_NAMES[instruction].name;
  const named = locale.language === 'zh' && locale.script === undefined ? likely.baseName : locale.baseName;
  let name: string | undefined;
  try {
    name = new Intl.DisplayNames([instruction], { type: 'language', fallback: 'none' }).of(named);
  } catch {
    name = undefined;
  }
  const zh = instruction === 'zh-Hans';
  if (name === undefined) return zh ? `语言标签为 ${canonical} 的语言` : `the language tagged ${canonical}`;
  const [open, close, comma] = zh ? ['（', '）', '，'] : [' (', ')', ', '];
  return name.endsWith(close) ? `${name.slice(0, -close.length)}${comma}${canonical}${close}` : `${name}${open}${canonical}${close}`;
}
