import type { Locale } from '../../../libs/plugins-sdk';

/** The fixed sentences this plugin writes into its segments, per instruction language. */
export interface GraphText {
  charactersIntro: string;
  noCharacters: string;
  relationsIntro: string;
  noRelations: string;
}

const TEXT: Record<Locale, GraphText> = {
  en: {
    charactersIntro: 'The characters (id | name):',
    noCharacters: '(no characters)',
    relationsIntro: 'Relations known before this turn (from -> to | relation):',
    noRelations: '(none recorded yet)',
  },
  'zh-Hans': {
    charactersIntro: '角色（id | 名字）：',
    noCharacters: '（没有角色）',
    relationsIntro: '本回合之前已知的关系（from -> to | 关系）：',
    noRelations: '（尚无记录）',
  },
};

export const graphText = (locale: Locale): GraphText => TEXT[locale] ?? TEXT.en;
