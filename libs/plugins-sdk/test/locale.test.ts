import { canonicalLocaleTag, promptLocaleOf } from '..';

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

  it('keeps well-formed tags in canonical form and refuses ill-formed ones', () => {
    expect(canonicalLocaleTag('EN-us')).toBe('en-US');
    expect(canonicalLocaleTag('zh-hans-cn')).toBe('zh-Hans-CN');
    expect(canonicalLocaleTag('pt-BR')).toBe('pt-BR');
    expect(canonicalLocaleTag('cmn')).toBe('zh');
    for (const bad of ['en_US!!', '', 'i-default', 'a', '中文', `en-${'x'.repeat(300)}`]) expect(canonicalLocaleTag(bad)).toBeNull();
  });
});
