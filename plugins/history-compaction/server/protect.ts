import type { PluginHistoryMessage } from '../../../libs/plugins-sdk';

/** The last two user turns stay as they are written… */
export const PROTECTED_USER_TURNS = 2;
/** …and the last five messages: whichever protects more. */
export const PROTECTED_MESSAGES = 5;

/**
 * The index of the first protected message: everything before it may be compacted.
 *
 * A user turn is a turn (`turnId`) with a player message (`sourceType: 'player'`); image
 * description rows (`sourceType: 'system'`, role `user`) and activations without player input are
 * not user turns. The last two user turns are protected from the first message of either of them
 * (every message of those turns); the last five messages likewise. With fewer than two user turns
 * every user turn there is is protected.
 */
export function protectedStart(messages: readonly PluginHistoryMessage[]): number {
  const byMessages = Math.max(0, messages.length - PROTECTED_MESSAGES);
  const userTurns: string[] = [];
  for (const m of messages) if (m.sourceType === 'player' && !userTurns.includes(m.turnId)) userTurns.push(m.turnId);
  const protectedTurns = new Set(userTurns.slice(-PROTECTED_USER_TURNS));
  const first = messages.findIndex((m) => protectedTurns.has(m.turnId));
  return Math.min(byMessages, first === -1 ? messages.length : first);
}
