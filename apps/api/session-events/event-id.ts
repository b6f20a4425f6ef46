import { InvalidInputError } from '../../../libs/errors';
/**
 * Ids of the session event stream. A log event's id is its global position (`"1042"`); a story
 * delta's id is `"<position>-<seq>"`: the position of its call's `llm.calling@1` and its 1-based
 * number within that call, so the two never collide and both order after the call's event.
 */
export type ResumePoint = { position: number; seq: number | null };

const ID_PATTERN = /^(\d{1,15})(?:-(\d{1,9}))?$/;

/** `Last-Event-ID` read back; null for a missing or foreign value (the stream then starts where `from`, or the live start, says). */
export function parseEventId(value: string | undefined): ResumePoint | null {
  const match = value === undefined ? null : ID_PATTERN.exec(value.trim());
  if (!match) return null;
  const position = Number(match[1]);
  const seq = match[2] === undefined ? null : Number(match[2]);
  if (!Number.isSafeInteger(position) || (seq !== null && seq < 1)) return null;
  return { position, seq };
}

export const logEventId = (position: number): string => String(position);
export const deltaEventId = (callPosition: number, seq: number): string => `${callPosition}-${seq}`;

const FROM_PATTERN = /^\d{1,15}$/;

/**
 * `?from=` of the session stream, read: the global position the stream sends events after
 * (`start` or `0`: 0, the whole session; `<position>`: that event and the ones after it); null when
 * absent. Anything else is a 400 naming `from`.
 */
export function parseStreamFrom(value: unknown): number | null {
  if (value === undefined) return null;
  const text = typeof value === 'string' ? value.trim() : null;
  if (text === 'start') return 0;
  if (text !== null && FROM_PATTERN.test(text)) {
    const position = Number(text);
    if (Number.isSafeInteger(position)) return Math.max(0, position - 1);
  }
  throw new InvalidInputError([{ path: 'from', message: 'must be `start`, `0` or an event id of the stream (a log position, e.g. 1042)' }]);
}
