/** RFC 6901: the value at `pointer` in `value` (own properties only), or `{ found: false }` with the first token that does not resolve. */
export function resolvePointer(value: unknown, pointer: string): { found: true; value: unknown } | { found: false; at: string } {
  if (pointer === '') return { found: true, value };
  const tokens = pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
  let current = value;
  let at = '';
  for (const token of tokens) {
    at += `/${token.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (Array.isArray(current)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token) || Number(token) >= current.length) return { found: false, at };
      current = current[Number(token)];
    } else if (current !== null && typeof current === 'object' && Object.hasOwn(current, token)) {
      current = (current as Record<string, unknown>)[token];
    } else return { found: false, at };
  }
  return { found: true, value: current };
}

/** A JSON pointer: empty, or `/`-separated tokens with `~0` / `~1` escapes. */
export const JSON_POINTER_PATTERN = '^(/([^~/]|~[01])*)*$';
