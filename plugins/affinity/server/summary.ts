import type { Locale, WorldView } from '../../../libs/plugins-sdk';

/** The longest summary line (code points). */
export const SUMMARY_MAX = 200;
/** The longest feeling shown per character (code points). */
const FEELING_MAX = 60;

/** `text` on one line, cut to `max` code points (never inside a surrogate pair), with an ellipsis when cut. */
export function clip(text: string, max: number): string {
  const chars = Array.from(text.replace(/\s+/g, ' ').trim());
  return chars.length <= max ? chars.join('') : `${chars.slice(0, max - 1).join('')}…`;
}

/** A written row: the character's id, score and feeling. */
export interface WrittenAffinity {
  character: string;
  score: number;
  feeling: string;
}

/**
 * One line for the player, each character by name: "Mira: 3 (amused, protective); Tomas: 1 (…)"
 * / "米拉：3（…）"; that nothing changed for an empty call.
 */
export function affinitySummary(written: readonly WrittenAffinity[], world: WorldView | null, locale: Locale): string | undefined {
  const zh = locale === 'zh-Hans';
  if (written.length === 0) return undefined; // nothing changed: nothing to tell the player
  const names = new Map((world?.characters ?? []).map((c) => [c.id, c.name]));
  const parts = written.map((w) => {
    const name = names.get(w.character) ?? w.character;
    const feeling = clip(w.feeling, FEELING_MAX);
    return zh ? `${name}：${w.score}（${feeling}）` : `${name}: ${w.score} (${feeling})`;
  });
  return clip(parts.join(zh ? '；' : '; '), SUMMARY_MAX);
}
