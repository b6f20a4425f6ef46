/**
 * A copy of `value` that shares nothing mutable with it, as `structuredClone` makes one of a
 * journal's execution: its maps, sets, arrays and plain objects copied at every depth (an object
 * held twice is copied once, held twice by the copy), anything else cloned by `structuredClone`.
 * Its strings are shared, not copied: they cannot change, and an execution's are most of its size
 * (the handler results' JSON, the recorded replies), which `structuredClone` copied byte by byte
 * for every `tentatively` pass of a turn (issue 33).
 */
export function deepCopy<T>(value: T): T {
  return copyOf(value, new Map()) as T;
}

function copyOf(value: unknown, copies: Map<object, unknown>): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const known = copies.get(value);
  if (known !== undefined) return known;
  if (Array.isArray(value)) {
    const copy: unknown[] = new Array(value.length);
    copies.set(value, copy);
    for (let i = 0; i < value.length; i++) if (i in value) copy[i] = copyOf(value[i], copies);
    return copy;
  }
  if (value instanceof Map) {
    const copy = new Map();
    copies.set(value, copy);
    for (const [k, v] of value) copy.set(copyOf(k, copies), copyOf(v, copies));
    return copy;
  }
  if (value instanceof Set) {
    const copy = new Set();
    copies.set(value, copy);
    for (const v of value) copy.add(copyOf(v, copies));
    return copy;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) {
    const copy = structuredClone(value);
    copies.set(value, copy);
    return copy;
  }
  const copy: Record<string, unknown> = {};
  copies.set(value, copy);
  for (const key of Object.keys(value)) {
    const member = copyOf((value as Record<string, unknown>)[key], copies);
    // an own `__proto__` (JSON.parse makes one) stays a member, as structuredClone keeps it
    if (key === '__proto__') Object.defineProperty(copy, key, { value: member, enumerable: true, writable: true, configurable: true });
    else copy[key] = member;
  }
  return copy;
}
