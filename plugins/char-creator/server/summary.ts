import type { Locale } from '../../../libs/plugins-sdk';
import type { KeptCharacter } from './characters';

/** The longest summary line (code points). */
export const SUMMARY_MAX = 200;
/** The longest value shown in a summary (code points). */
const VALUE_MAX = 40;

/** `text` cut to `max` code points (never inside a surrogate pair), with an ellipsis when cut. */
export function clip(text: string, max: number): string {
  const chars = Array.from(text.replace(/\s+/g, ' ').trim());
  return chars.length <= max ? chars.join('') : `${chars.slice(0, max - 1).join('')}…`;
}

const shown = (value: unknown): string => (value === undefined ? '—' : clip(typeof value === 'string' ? value : JSON.stringify(value), VALUE_MAX));
const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** "New character: Old Bren" / "新角色：Old Bren". */
export function createdSummary(name: string, locale: Locale): string {
  return clip(locale === 'zh-Hans' ? `新角色：${name}` : `New character: ${name}`, SUMMARY_MAX);
}

/** A character before and after an update. */
export interface CharacterChange {
  before: KeptCharacter;
  after: KeptCharacter;
}

/**
 * "Mira: trust 2 → 3, status mending a net → ferrying the courier; Ash: …": each character's
 * fields whose value changed (in `order`, then by name), by the character's name; that nothing
 * changed when no value did.
 */
export function updatedSummary(changes: readonly CharacterChange[], order: readonly string[], locale: Locale): string | undefined {
  const zh = locale === 'zh-Hans';
  const parts = changes.flatMap(({ before, after }) => {
    // the schema's order, then any others by name (the store does not keep key order)
    const names = [
      ...order.filter((n) => Object.hasOwn(after.fields, n)),
      ...Object.keys(after.fields)
        .filter((n) => !order.includes(n))
        .sort(),
    ];
    const fields = names
      .filter((name) => !sameJson(before.fields[name], after.fields[name]))
      .map((name) => `${name} ${shown(before.fields[name])} → ${shown(after.fields[name])}`);
    return fields.length === 0 ? [] : [`${after.name}${zh ? '：' : ': '}${fields.join(zh ? '，' : ', ')}`];
  });
  if (parts.length === 0) return undefined; // nothing changed: nothing to tell the player
  return clip(parts.join(zh ? '；' : '; '), SUMMARY_MAX);
}
