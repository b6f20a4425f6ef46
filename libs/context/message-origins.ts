import type { ContextMessage } from './types';

const sameMessage = (a: ContextMessage, b: ContextMessage) =>
  a.role === b.role && a.content === b.content && JSON.stringify(a.images ?? null) === JSON.stringify(b.images ?? null);

/**
 * Where each message a PostContextAssembly hook returned came from: the index in `before` of the
 * message it is, or null for a message the hook added. A message is recognised by identity first
 * (the hook returned the very object it was given, even edited in place); a new object that equals
 * a message the hook was given (same role, content and images) is matched next, keeping the order
 * of the messages and preferring the latest candidate, so a dropped older copy of the same text
 * (e.g. a history message equal to the player input) is never mistaken for the current turn.
 */
export function traceOrigins(args: {
  /** The messages before the hook. */
  before: readonly ContextMessage[];
  /** The objects the hook was given, parallel to `before`. */
  given: readonly object[];
  /** What the hook returned, as returned (for identity). */
  returnedRaw: readonly unknown[];
  /** The same, validated (for content). */
  returned: readonly ContextMessage[];
}): (number | null)[] {
  const { before, given, returnedRaw, returned } = args;
  const index = new Map<unknown, number>(given.map((m, i) => [m, i]));
  const claimed = new Set<number>();
  const origins = returnedRaw.map((m): number | null => {
    const i = index.get(m);
    if (i === undefined || claimed.has(i)) return null; // returned twice: the second one is a copy
    claimed.add(i);
    return i;
  });
  // matches by content, from the end, between the identity anchors on either side
  const leftAnchor: number[] = [];
  let anchor = -1;
  origins.forEach((o, i) => {
    leftAnchor[i] = anchor;
    if (o !== null) anchor = o;
  });
  let upper = before.length;
  for (let i = returned.length - 1; i >= 0; i--) {
    const o = origins[i];
    if (o !== null) {
      upper = o;
      continue;
    }
    for (let k = upper - 1; k > leftAnchor[i]; k--) {
      if (claimed.has(k) || !sameMessage(before[k], returned[i])) continue;
      origins[i] = k;
      claimed.add(k);
      upper = k;
      break;
    }
  }
  return origins;
}
