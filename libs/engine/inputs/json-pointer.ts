/** What a JSON pointer found: the value, or nothing (a missing member, an index out of range). */
export type PointerResult = { found: true; value: unknown } | { found: false };

const own = (o: object, key: string) => Object.prototype.hasOwnProperty.call(o, key);

/**
 * RFC 6901: evaluates `pointer` against a JSON value. `""` is the whole value; each `/token` steps
 * into an object member (own properties only: `/constructor` never reaches `Object.prototype`) or
 * an array index (`0`, `1`, … without leading zeros; `-` names no element). `~1` is `/`, `~0` is
 * `~` (decoded in that order). The manifest checks the pointer's syntax (`JsonPointer` in the SDK).
 */
export function evaluatePointer(value: unknown, pointer: string): PointerResult {
  if (pointer === '') return { found: true, value };
  let current: unknown = value;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(current)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token) || Number(token) >= current.length) return { found: false };
      current = current[Number(token)];
    } else if (current !== null && typeof current === 'object' && own(current, token)) {
      current = (current as Record<string, unknown>)[token];
    } else {
      return { found: false };
    }
  }
  return { found: true, value: current };
}
