import type { Locale } from '../../../libs/plugins-sdk';

/** The fixed sentences this plugin writes into its segments, per instruction language (zh-Hans or English). */
export interface AffinityText {
  charactersIntro: string;
  noCharacters: string;
  noRecord: string;
  valuesIntro: string;
}

const TEXT: Record<Locale, AffinityText> = {
  en: {
    charactersIntro: 'The non-player characters whose feelings you track (id | name):',
    noCharacters: '(no non-player characters)',
    noRecord: 'no record yet: score 0, neutral',
    valuesIntro: 'What each character felt about the player before this turn (id | value):',
  },
  'zh-Hans': {
    charactersIntro: '你记录其感受的非玩家角色（id | 名字）：',
    noCharacters: '（没有非玩家角色）',
    noRecord: '尚无记录：分数 0，中立',
    valuesIntro: '本回合之前每个角色对玩家的感受（id | 值）：',
  },
};

export const affinityText = (locale: Locale): AffinityText => TEXT[locale] ?? TEXT.en;
