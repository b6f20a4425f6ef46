import type { ContextMessage, MessageSectionName } from './types';

/** Sections that make up the current turn (spec §1 "This turn's story text"). */
export const CURRENT_TURN: readonly MessageSectionName[] = ['recent-images', 'player-input', 'story-text', 'ending-hint', 'mid-turn'];

export interface Protection {
  /** The current turn, with the turn context right before it: [start, end) in the messages. */
  protectedRange: { start: number; end: number };
  /** Every message ordinary history trimming keeps: the protected range and the summary envelope. */
  protectedIndexes: number[];
  /** Content of the turn-context message ('' when there is none). */
  turnContext: string;
}

/**
 * Spec §1/§5 protected content, read from the sections of the messages (not from indexes taken
 * before a rewrite): the current turn from its first to its last message, the turn context when
 * it sits right before it, and the summary envelope (`<compacted_history>`).
 */
export function protectionOf(messages: readonly ContextMessage[], sections: readonly MessageSectionName[]): Protection {
  let first = -1;
  let last = -1;
  sections.forEach((s, i) => {
    if (!CURRENT_TURN.includes(s)) return;
    if (first === -1) first = i;
    last = i;
  });
  const turnContextAt = sections.indexOf('turn-context');
  let protectedRange: Protection['protectedRange'];
  if (first === -1) {
    // no current-turn message left (a hook dropped them): keep a turn context alone, else nothing
    protectedRange = turnContextAt === -1 ? { start: sections.length, end: sections.length } : { start: turnContextAt, end: turnContextAt + 1 };
  } else {
    protectedRange = { start: sections[first - 1] === 'turn-context' ? first - 1 : first, end: last + 1 };
  }
  const protectedIndexes: number[] = [];
  sections.forEach((s, i) => {
    if (s === 'summary' || (i >= protectedRange.start && i < protectedRange.end)) protectedIndexes.push(i);
  });
  return { protectedRange, protectedIndexes, turnContext: turnContextAt === -1 ? '' : messages[turnContextAt].content };
}
