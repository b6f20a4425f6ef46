import type { Locale } from './manifest';

/** The longest language tag a session accepts (BCP 47 sets no limit; this one keeps it bounded). */
export const MAX_LOCALE_TAG_LENGTH = 255;

/**
 * The canonical form of a well-formed BCP 47 language tag (`EN-us` → `en-US`, `cmn` → `zh`), or
 * null when the tag is ill-formed (`en_US!!`, `i-default`, empty, too long).
 */
export function canonicalLocaleTag(tag: string): string | null {
  if (tag.length === 0 || tag.length > MAX_LOCALE_TAG_LENGTH) return null;
  try {
    return Intl.getCanonicalLocales(tag)[0] ?? null;
  } catch {
    return null;
  }
}

/**
 * The locale of prompts and plugin variant files for a session's language tag (spec §6): a
 * Simplified Chinese session reads Chinese, every other session reads English. "Simplified
 * Chinese" is Chinese whose likely script is Hans (CLDR likely subtags: zh, zh-CN, zh-SG, zh-MY,
 * zh-Hans-*); zh-TW, zh-HK, zh-MO and zh-Hant-* are Traditional and read English.
 */
export function promptLocaleOf(tag: string): Locale {
  const canonical = canonicalLocaleTag(tag);
  if (canonical === null) return 'en';
  const likely = new Intl.Locale(canonical).maximize();
  return likely.language === 'zh' && likely.script === 'Hans' ? 'zh-Hans' : 'en';
}
