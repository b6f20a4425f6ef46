import type { HandlerContext, PluginApi, ReturnedSegment, ToolContext } from '../../../libs/plugins-sdk';
import { advance, type Clock, clockOf, clockTime, startOf, timeOfDay } from './clock';
import { advanceSummary } from './summary';
import { describeClock, nowText, rulesText, storyIntroText } from './text';

export const NAMESPACE = 'clock';
export const KEY = 'now';
export const ADVANCED = 'world-time.advanced';

const configOf = (ctx: HandlerContext | ToolContext) => ctx.world?.pluginConfig?.['world-time'];

async function currentClock(ctx: HandlerContext | ToolContext): Promise<Clock> {
  return clockOf(await ctx.pluginData.get(NAMESPACE, KEY)) ?? startOf(configOf(ctx));
}

/**
 * `<world-time-rules>` (session: the start and the bands, fixed for the session) for the advance
 * runtime's system prompt; `<world-time>` (turn) for it and, as a second segment, for the story. The
 * story's block carries only the clock: the line that says what it is, the same every turn, is a
 * session segment in the story's system prompt (the turn context comes after the history, so every
 * byte of it is new each turn).
 */
async function segments(ctx: HandlerContext): Promise<ReturnedSegment[]> {
  const clock = await currentClock(ctx);
  const now = `<world-time>\n${nowText(clock, ctx.locale)}\n</world-time>`;
  return [
    {
      id: 'world-time-rules',
      content: `<world-time-rules>\n${rulesText(startOf(configOf(ctx)), ctx.locale)}\n</world-time-rules>`,
      position: 'system',
      audience: 'self',
      volatility: 'session',
    },
    { id: 'world-time-now', content: now, position: 'system', audience: 'self', volatility: 'turn' },
    { id: 'world-time-story-intro', content: storyIntroText(ctx.locale), position: 'system', audience: 'story', volatility: 'session' },
    {
      id: 'world-time-story',
      content: `<world-time>\n${describeClock(clock, ctx.locale)}\n</world-time>`,
      position: 'system',
      audience: 'story',
      volatility: 'turn',
    },
  ];
}

/** `advance-clock`: writes the clock moved forward; when time passed, emits `world-time.advanced`. The summary shows the clock before and after. */
async function advanceClock(args: Record<string, unknown>, ctx: ToolContext) {
  const minutes = args.minutes as number;
  const before = await currentClock(ctx);
  const next = advance(before, minutes);
  await ctx.pluginData.set(NAMESPACE, KEY, next);
  const shown = { day: next.day, time: clockTime(next.minute), timeOfDay: timeOfDay(next.minute) };
  if (minutes > 0) ctx.emit(ADVANCED, { ...shown, minutes });
  return { ...shown, summary: advanceSummary(before, next, ctx.locale) };
}

export function register(api: PluginApi): void {
  api.provideExtension('prompt.segment@1', 'clock-blocks', { handler: (_input, ctx) => segments(ctx) });
  api.registerTool('advance-clock', advanceClock);
}
