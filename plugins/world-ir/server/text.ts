import type { Locale } from '../../../libs/plugins-sdk';

export interface IrText {
  noCharacters: string;
  noTerms: string;
  more: (n: number) => string;
}

const TEXT: Record<Locale, IrText> = {
  en: { noCharacters: '(no characters)', noTerms: '(no terms yet)', more: (n) => `(${n} more terms not shown)` },
  'zh-Hans': { noCharacters: '（没有角色）', noTerms: '（尚无词汇）', more: (n) => `（另有 ${n} 个词汇未列出）` },
};

export const irText = (locale: Locale): IrText => TEXT[locale] ?? TEXT.en;
