import type { Locale } from './manifest';

import { canonicalLocaleTag, MAX_LOCALE_TAG_LENGTH } from '../text';

export { canonicalLocaleTag, MAX_LOCALE_TAG_LENGTH };

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
