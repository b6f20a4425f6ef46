/** The clock as stored (namespace `clock`, key `now`): the day (from 1) and the minute of the day (0–1439). */
export interface Clock {
  day: number;
  minute: number;
}

export type TimeOfDay = 'night' | 'morning' | 'afternoon' | 'evening';

export const MINUTES_PER_DAY = 24 * 60;
export const DEFAULT_START: Clock = { day: 1, minute: 8 * 60 };

/** Bands by start hour: night 21:00–04:59, morning 05:00–11:59, afternoon 12:00–16:59, evening 17:00–20:59. */
export function timeOfDay(minute: number): TimeOfDay {
  const hour = Math.floor(minute / 60);
  if (hour < 5 || hour >= 21) return 'night';
  if (hour < 12) return 'morning';
  if (hour < 17) return 'afternoon';
  return 'evening';
}

export const clockTime = (minute: number): string => `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;

export function advance(clock: Clock, minutes: number): Clock {
  const total = clock.minute + minutes;
  return { day: clock.day + Math.floor(total / MINUTES_PER_DAY), minute: total % MINUTES_PER_DAY };
}

/**
 * The world's start (`pluginConfig.world-time.start: { day, time: "HH:MM" }` in WORLD.md); a
 * missing or malformed start is day 1, 08:00.
 */
export function startOf(config: Readonly<Record<string, unknown>> | undefined): Clock {
  const start = config?.start;
  if (!start || typeof start !== 'object') return DEFAULT_START;
  const { day, time } = start as { day?: unknown; time?: unknown };
  const m = typeof time === 'string' ? /^([01]\d|2[0-3]):([0-5]\d)$/.exec(time) : null;
  if (!Number.isInteger(day) || (day as number) < 1 || !m) return DEFAULT_START;
  return { day: day as number, minute: Number(m[1]) * 60 + Number(m[2]) };
}

/** A stored row read back (null or malformed: none). */
export function clockOf(value: unknown): Clock | null {
  if (!value || typeof value !== 'object') return null;
  const { day, minute } = value as { day?: unknown; minute?: unknown };
  if (!Number.isInteger(day) || !Number.isInteger(minute)) return null;
  return { day: day as number, minute: minute as number };
}
