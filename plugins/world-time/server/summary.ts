import type { Locale } from '../../../libs/plugins-sdk';
import { type Clock, clockTime } from './clock';

/**
 * One line for the player: "Day 1, 08:00 → 14:30", "Day 1, 23:30 → Day 2, 00:15" / "第 1 天，08:00 →
 * 14:30"; none when the clock did not move.
 */
export function advanceSummary(before: Clock, after: Clock, locale: Locale): string | undefined {
  const zh = locale === 'zh-Hans';
  const day = (c: Clock) => (zh ? `第 ${c.day} 天，` : `Day ${c.day}, `);
  if (before.day === after.day && before.minute === after.minute) return undefined; // the clock did not move: nothing to tell the player
  const end = before.day === after.day ? clockTime(after.minute) : `${day(after)}${clockTime(after.minute)}`;
  return `${day(before)}${clockTime(before.minute)} → ${end}`;
}
