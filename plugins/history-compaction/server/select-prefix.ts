import type { PluginHistoryMessage } from '../../../libs/plugins-sdk';

/** Why the prefix ends where it does. */
export type PrefixStop =
  /** it reaches the protected messages */
  | 'protected'
  /** the next message would overflow what the fast model can read */
  | 'capacity'
  /** the next message alone is more than the fast model can read: it stays uncompacted, never truncated */
  | 'oversized';

export interface PrefixChoice {
  readonly messages: readonly PluginHistoryMessage[];
  readonly stop: PrefixStop;
}

/**
 * The longest continuous prefix of `messages[0, limit)` (`limit`: the first protected message)
 * whose cost fits `capacity` (the fast model's input minus the summary request's own text), then
 * shortened to end on a turn boundary when it would split a turn (its last message and the next
 * one share a `turnId`), unless that leaves nothing, in which case the split prefix is kept.
 *
 * A message that alone costs more than `capacity` is never summarized (nor cut): the prefix stops
 * before it, and as the framework accepts only a continuous uncompacted prefix, every message after
 * it stays uncompacted too while it is there. Once it is the oldest uncompacted message, no new
 * history is compacted at all (`stop: 'oversized'` with no messages).
 */
export function selectPrefix(
  messages: readonly PluginHistoryMessage[],
  limit: number,
  capacity: number,
  cost: (message: PluginHistoryMessage) => number,
): PrefixChoice {
  let used = 0;
  let end = 0;
  let stop: PrefixStop = 'protected';
  for (; end < limit; end++) {
    const c = cost(messages[end]);
    if (c > capacity) {
      stop = 'oversized';
      break;
    }
    if (used + c > capacity) {
      stop = 'capacity';
      break;
    }
    used += c;
  }
  let cut = end;
  if (end < messages.length) {
    while (cut > 0 && messages[cut - 1].turnId === messages[cut].turnId) cut--;
    if (cut === 0) cut = end;
  }
  return { messages: messages.slice(0, cut), stop };
}
