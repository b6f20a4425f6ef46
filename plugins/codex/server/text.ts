import type { Locale } from '../../../libs/plugins-sdk';

/** The fixed sentences this plugin writes into its segments, per instruction language. */
export interface CodexText {
  categories: string;
  characters: string;
  noCharacters: string;
  entriesIntro: string;
  noEntries: string;
  more: (n: number) => string;
}

const TEXT: Record<Locale, CodexText> = {
  en: {
    categories: 'Categories: place, creature, object, faction, custom, event, other.',
    characters: 'These are characters with their own records, never codex entries:',
    noCharacters: '(none)',
    entriesIntro: 'The codex before this turn (key | entry):',
    noEntries: '(the codex is empty)',
    more: (n) => `(${n} more entries not shown)`,
  },
  'zh-Hans': {
    categories: '类别：place（地点）、creature（生物）、object（物品）、faction（势力）、custom（习俗）、event（事件）、other（其他）。',
    characters: '以下是有自己记录的角色，永远不作为词条：',
    noCharacters: '（无）',
    entriesIntro: '本回合之前的词条集（key | 词条）：',
    noEntries: '（词条集为空）',
    more: (n) => `（另有 ${n} 个词条未列出）`,
  },
};

export const codexText = (locale: Locale): CodexText => TEXT[locale] ?? TEXT.en;
