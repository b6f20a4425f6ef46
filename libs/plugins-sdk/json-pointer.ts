/**
 * JSON pointers (RFC 6901), the one evaluator: a runtime's input `select` and `schedule.when`, and
 * the `world-dimension-get` tool's `path`. Not a package: `jsonpointer` and `json-pointer` read
 * inherited members (`/constructor` of `{}` finds `Object`) and do not say which token missed;
 * this is twenty lines.
 */

/** A JSON pointer: empty, or `/`-separated tokens with `~0` / `~1` escapes (a regex source, for JSON Schema `pattern` too). */
export const JSON_POINTER_PATTERN = '^(/([^~/]|~[01])*)*$';

/** What a JSON pointer found: the value, or nothing, with the pointer up to the first token that does not resolve (`at`, escaped as written). */
export type PointerResult = { found: true; value: unknown } | { found: false; at: string };

/**
 * Evaluates `pointer` against a JSON value. `""` is the whole value; each `/token` steps into an
 * object member (own properties only: `/constructor` never reaches `Object.prototype`) or an array
 * index (`0`, `1`, … without leading zeros; `-` names no element). `~1` is `/`, `~0` is `~`
 * (decoded in that order). The syntax is checked where the pointer comes in (`JsonPointer` in the
 * manifest, `JSON_POINTER_PATTERN` in a tool's parameters).
 */
export function evaluatePointer(value: unknown, pointer: string): PointerResult {
  if (pointer === '') return { found: true, value };
  let current: unknown = value;
  let at = '';
  for (const raw of pointer.slice(1).split('/')) {
    at += `/${raw}`;
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(current)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token) || Number(token) >= current.length) return { found: false, at };
      current = current[Number(token)];
    } else if (current !== null && typeof current === 'object' && Object.hasOwn(current, token)) {
      current = (current as Record<string, unknown>)[token];
    } else return { found: false, at };
  }
  return { found: true, value: current };
}
