/**
 * Ids of the session event stream. A log event's id is its global position (`"1042"`); a story
 * delta's id is `"<position>-<seq>"`: the position of its call's `llm.calling@1` and its 1-based
 * number within that call, so the two never collide and both order after the call's event.
 */
export type ResumePoint = { position: number; seq: number | null };

const ID_PATTERN = /^(\d{1,15})(?:-(\d{1,9}))?$/;

/** `Last-Event-ID` read back; null for a missing or foreign value (the stream then starts at the beginning of the session). */
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
