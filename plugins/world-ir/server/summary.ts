import type { Locale } from '../../../libs/plugins-sdk';

/** The longest summary line (code points). */
export const SUMMARY_MAX = 200;

/** `text` on one line, cut to `max` code points (never inside a surrogate pair), with an ellipsis when cut. */
export function clip(text: string, max: number): string {
  const chars = Array.from(text.replace(/\s+/g, ' ').trim());
  return chars.length <= max ? chars.join('') : `${chars.slice(0, max - 1).join('')}…`;
}

/**
 * One line for the player: "2 facts, 1 new term (the ash river)" / "2 条事实，1 个新词汇（…）", the
 * new terms as written; that nothing was recorded for empty lists.
 */
export function recordSummary(facts: number, newTerms: readonly string[], locale: Locale): string | undefined {
  const zh = locale === 'zh-Hans';
  if (facts === 0 && newTerms.length === 0) return undefined; // nothing recorded: nothing to tell the player
  const parts: string[] = [];
  if (facts > 0) parts.push(zh ? `${facts} 条事实` : `${facts} ${facts === 1 ? 'fact' : 'facts'}`);
  if (newTerms.length > 0) {
    const list = newTerms.join(zh ? '、' : ', ');
    parts.push(zh ? `${newTerms.length} 个新词汇（${list}）` : `${newTerms.length} new ${newTerms.length === 1 ? 'term' : 'terms'} (${list})`);
  }
  const line = parts.join(zh ? '，' : ', ');
  // a long list of terms is cut, its closing bracket kept
  if (Array.from(line).length <= SUMMARY_MAX) return line;
  return `${clip(line, SUMMARY_MAX - 1)}${zh ? '）' : ')'}`;
}
