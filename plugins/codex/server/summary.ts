import type { Locale } from '../../../libs/plugins-sdk';

/** The longest summary line (code points). */
export const SUMMARY_MAX = 200;
/** The longest term shown (code points). */
const TERM_MAX = 60;

/** `text` on one line, cut to `max` code points (never inside a surrogate pair), with an ellipsis when cut. */
export function clip(text: string, max: number): string {
  const chars = Array.from(text.replace(/\s+/g, ' ').trim());
  return chars.length <= max ? chars.join('') : `${chars.slice(0, max - 1).join('')}…`;
}

/** A recorded entry: its term and whether the call added it (else updated it). */
export interface RecordedEntry {
  term: string;
  added: boolean;
}

/**
 * One line for the player, in the call's order: "Codex: soot-black ledger (new), the ash river
 * (updated)" / "词条：……（新）、……（更新）"; that nothing changed for an empty call.
 */
export function codexSummary(entries: readonly RecordedEntry[], locale: Locale): string | undefined {
  const zh = locale === 'zh-Hans';
  if (entries.length === 0) return undefined; // nothing changed: nothing to tell the player
  const parts = entries.map((e) => {
    const term = clip(e.term, TERM_MAX);
    if (zh) return `${term}（${e.added ? '新' : '更新'}）`;
    return `${term} (${e.added ? 'new' : 'updated'})`;
  });
  return clip(zh ? `词条：${parts.join('、')}` : `Codex: ${parts.join(', ')}`, SUMMARY_MAX);
}
