import type { Locale } from '../../../libs/plugins-sdk';
import { type Clock, clockTime, type TimeOfDay, timeOfDay } from './clock';

const BANDS: Record<Locale, Record<TimeOfDay, string>> = {
  en: { night: 'night', morning: 'morning', afternoon: 'afternoon', evening: 'evening' },
  'zh-Hans': { night: '夜晚', morning: '上午', afternoon: '下午', evening: '傍晚' },
};

/** "Day 2, 14:30 (afternoon)" / "第 2 天，14:30（下午）". */
export function describeClock(clock: Clock, locale: Locale): string {
  const band = (BANDS[locale] ?? BANDS.en)[timeOfDay(clock.minute)];
  return locale === 'zh-Hans' ? `第 ${clock.day} 天，${clockTime(clock.minute)}（${band}）` : `Day ${clock.day}, ${clockTime(clock.minute)} (${band})`;
}

export function rulesText(start: Clock, locale: Locale): string {
  const b = BANDS[locale] ?? BANDS.en;
  return locale === 'zh-Hans'
    ? [
        `故事的时钟从${describeClock(start, locale)}开始，只会向前走。`,
        `一天中的时段：${b.night} 00:00–04:59 和 21:00–23:59，${b.morning} 05:00–11:59，${b.afternoon} 12:00–16:59，${b.evening} 17:00–20:59。`,
      ].join('\n')
    : [
        `The story's clock started on ${describeClock(start, locale)} and only moves forward.`,
        `Times of day: ${b.night} 00:00–04:59 and 21:00–23:59, ${b.morning} 05:00–11:59, ${b.afternoon} 12:00–16:59, ${b.evening} 17:00–20:59.`,
      ].join('\n');
}

/** "The time in the story now: Day 2, 14:30 (afternoon)" / "故事中的当前时间：第 2 天，14:30（下午）". */
export function nowText(clock: Clock, locale: Locale): string {
  return locale === 'zh-Hans' ? `故事中的当前时间：${describeClock(clock, locale)}` : `The time in the story now: ${describeClock(clock, locale)}`;
}

/**
 * The line the story reads once in its system prompt (session) about its `<world-time>` block, which
 * then carries only the clock: spec §2, what stays the same for the whole game goes in the system prompt.
 */
export function storyIntroText(locale: Locale): string {
  return locale === 'zh-Hans' ? '<world-time> 给出故事中的当前时间。' : '<world-time> gives the time in the story now.';
}
