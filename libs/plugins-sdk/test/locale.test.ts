import { canonicalLocaleTag, languageNameOf, promptLocaleOf } from '..';
import { PROMPT_LOCALES_KEPT } from '../locale';

describe('session language tags (spec §6)', () => {
  it.each([
    // Simplified Chinese reads Chinese fixed text
    ['zh-Hans', 'zh-Hans'],
    ['zh-CN', 'zh-Hans'],
    ['zh-SG', 'zh-Hans'],
    ['zh', 'zh-Hans'],
    ['zh-Hans-CN', 'zh-Hans'],
    ['zh-Hans-SG', 'zh-Hans'],
    ['zh-hans-cn', 'zh-Hans'],
    ['ZH-CN', 'zh-Hans'],
    ['zh-MY', 'zh-Hans'],
    ['cmn', 'zh-Hans'],
    ['zh-CN-u-nu-hanidec', 'zh-Hans'],
    // Traditional Chinese and every other language read English
    ['zh-TW', 'en'],
    ['zh-Hant', 'en'],
    ['zh-Hant-CN', 'en'],
    ['zh-HK', 'en'],
    ['zh-MO', 'en'],
    ['zh-Latn', 'en'],
    ['yue', 'en'],
    ['en', 'en'],
    ['en-GB', 'en'],
    ['pt-BR', 'en'],
    ['ar', 'en'],
    ['he', 'en'],
    ['fr-CA', 'en'],
    ['ja', 'en'],
    // ill-formed: never Chinese
    ['en_US!!', 'en'],
    ['', 'en'],
  ])('%s → %s', (tag, locale) => {
    expect(promptLocaleOf(tag)).toBe(locale);
  });

  it('answers a tag asked again alike, also once more tags than it keeps were asked (the oldest forgotten)', () => {
    const tags = Array.from({ length: PROMPT_LOCALES_KEPT + 20 }, (_, i) => (i % 2 === 0 ? `zh-CN-x-t${i}` : `zh-TW-x-t${i}`));
    const first = tags.map(promptLocaleOf);
    expect(first.filter((l) => l === 'zh-Hans')).toHaveLength(tags.length / 2);
    expect(tags.map(promptLocaleOf)).toEqual(first);
    for (const [tag, locale] of [
      ['zh-CN', 'zh-Hans'],
      ['ZH-cn', 'zh-Hans'],
      ['zh-TW', 'en'],
      ['en_US!!', 'en'],
      [`zh-${'x'.repeat(300)}`, 'en'],
    ] as const) {
      expect([promptLocaleOf(tag), promptLocaleOf(tag)]).toEqual([locale, locale]);
    }
  });

  it('keeps well-formed tags in canonical form and refuses ill-formed ones', () => {
    expect(canonicalLocaleTag('EN-us')).toBe('en-US');
    expect(canonicalLocaleTag('zh-hans-cn')).toBe('zh-Hans-CN');
    expect(canonicalLocaleTag('pt-BR')).toBe('pt-BR');
    expect(canonicalLocaleTag('cmn')).toBe('zh');
    for (const bad of ['en_US!!', '', 'i-default', 'a', '中文', `en-${'x'.repeat(300)}`]) expect(canonicalLocaleTag(bad)).toBeNull();
  });
});

describe('how [LANGUAGE] names the session language (spec §3), in its instruction language', () => {
  it.each([
    // named in English, with the tag (CLDR names, full ICU)
    ['pt-BR', 'Brazilian Portuguese (pt-BR)'],
    ['es-419', 'Latin American Spanish (es-419)'],
    ['ja', 'Japanese (ja)'],
    ['ar', 'Arabic (ar)'],
    ['sr-Latn', 'Serbian (Latin, sr-Latn)'],
    ['zh-Hant', 'Traditional Chinese (zh-Hant)'],
    ['en-GB', 'British English (en-GB)'],
    ['es', 'Spanish (es)'],
    // a Chinese tag without a script is named with its likely script
    ['zh-TW', 'Chinese (Traditional, Taiwan, zh-TW)'],
    // the instruction language itself: the plain name, as before
    ['en', 'English'],
    ['en-US', 'English'],
    ['EN-us', 'English'],
    ['zh-CN', '简体中文'],
    ['zh', '简体中文'],
    ['zh-Hans', '简体中文'],
    ['zh-hans-cn', '简体中文'],
    // another Simplified Chinese region: named in Chinese
    ['zh-SG', '中文（简体，新加坡，zh-SG）'],
    // a tag CLDR has no name for: the tag itself
    ['qaa', 'the language tagged qaa'],
  ])('%s → %s', (tag, name) => {
    expect(languageNameOf(tag)).toBe(name);
  });

  it('is deterministic: the same tag gives the same bytes', () => {
    for (const tag of ['pt-BR', 'zh-SG', 'sr-Latn']) expect(languageNameOf(tag)).toBe(languageNameOf(tag));
  });
});
