import { languageNameOf, promptLocaleOf } from '../../plugins-sdk';
import { buildContext } from '..';
import { params } from './fixtures';

/** The [LANGUAGE] block of a session with this tag, as the engine assembles it (the name the session records at creation). */
async function languageBlock(tag: string): Promise<string> {
  const ctx = await buildContext(params({ locale: promptLocaleOf(tag), languageName: languageNameOf(tag) }));
  return /\[LANGUAGE\]\n(.*)/.exec(ctx.systemSections[0].text)![1];
}

describe('§3 [LANGUAGE] names the session’s own language, in the instruction language', () => {
  it.each([
    ['pt-BR', 'Write everything the player can read in Brazilian Portuguese (pt-BR).'],
    ['es-419', 'Write everything the player can read in Latin American Spanish (es-419).'],
    ['ja', 'Write everything the player can read in Japanese (ja).'],
    ['ar', 'Write everything the player can read in Arabic (ar).'],
    ['sr-Latn', 'Write everything the player can read in Serbian (Latin, sr-Latn).'],
    ['zh-Hant', 'Write everything the player can read in Traditional Chinese (zh-Hant).'],
    ['en', 'Write everything the player can read in English.'],
    ['zh-CN', '玩家能读到的所有内容都用简体中文书写。'],
    ['zh-SG', '玩家能读到的所有内容都用中文（简体，新加坡，zh-SG）书写。'],
  ])('a %s session: %s', async (tag, line) => {
    expect(await languageBlock(tag)).toBe(line);
  });

  it('a session recorded before names were (no languageName) reads the block it was sent: English, or Simplified Chinese', async () => {
    const block = async (locale: 'en' | 'zh-Hans') => /\[LANGUAGE\]\n(.*)/.exec((await buildContext(params({ locale }))).systemSections[0].text)![1];
    expect(await block('en')).toBe('Write everything the player can read in English.');
    expect(await block('zh-Hans')).toBe('玩家能读到的所有内容都用简体中文书写。');
  });

  it('the same tag gives the same preamble bytes', async () => {
    const a = await buildContext(params({ locale: 'en', languageName: languageNameOf('pt-BR') }));
    const b = await buildContext(params({ locale: 'en', languageName: languageNameOf('pt-BR') }));
    expect(a.systemPrompt).toBe(b.systemPrompt);
  });
});
