import type { Locale } from '../../../libs/plugins-sdk';
import type { NoteField } from './fields';

/** The fixed text the plugin writes into `<character-notes>`, in the session's instruction language. */
export interface NotesText {
  readonly intro: string;
  readonly fields: Readonly<Record<NoteField, string>>;
  /** Said once when trimming left fields out for every character. */
  trimmed(fields: readonly string[]): string;
  /** Said once when whole characters did not fit. */
  omitted(names: readonly string[]): string;
  readonly aka: (aliases: readonly string[]) => string;
  /** Between a label and its value. */
  readonly colon: string;
}

export const NOTES_TEXT: Readonly<Record<Locale, NotesText>> = {
  en: {
    intro:
      "Roleplay notes for the characters the story voices (never the player's own character). Voice each character by its notes. The player has not read them: let secrets come out only through the story.",
    fields: {
      tone: 'Tone',
      manner: 'Manner',
      personality: 'Personality',
      goals: 'Goals',
      fears: 'Fears',
      secrets: 'Secrets',
      relationships: 'Relationships',
      rules: 'Rules',
      sampleLines: 'Sample lines',
    },
    trimmed: (fields) => `Shortened to fit: left out for every character: ${fields.join(', ')}.`,
    omitted: (names) => `Notes not listed, to fit: ${names.join(', ')}.`,
    aka: (aliases) => ` (aka ${aliases.join(', ')})`,
    colon: ': ',
  },
  'zh-Hans': {
    intro: '以下是故事中由你演绎的角色的扮演笔记（绝不包括玩家自己的角色）。按笔记演绎每个角色。玩家没有读过这些笔记：秘密只能通过故事逐渐揭示。',
    fields: {
      tone: '语气',
      manner: '举止',
      personality: '性格',
      goals: '目标',
      fears: '恐惧',
      secrets: '秘密',
      relationships: '关系',
      rules: '规则',
      sampleLines: '示例台词',
    },
    trimmed: (fields) => `为控制篇幅，所有角色都省略了：${fields.join('、')}。`,
    omitted: (names) => `篇幅所限，未列出笔记的角色：${names.join('、')}。`,
    aka: (aliases) => `（又名${aliases.join('、')}）`,
    colon: '：',
  },
};
