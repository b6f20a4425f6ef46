/**
 * Freezes a value and everything it holds (own enumerable members, at every depth), in place, and
 * returns it: what a memo shares between callers, so that none can change it for the others.
 */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}
