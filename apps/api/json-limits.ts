/**
 * Limits on the shape of JSON the API reads, checked before any schema walks it: zod's `z.json()`
 * (and `JSON.stringify`) recurse once per level, so ~2,000 nested arrays would end in a `RangeError`
 * (a 500) instead of a 400 naming the field.
 */

/** Most levels of arrays and objects in a JSON body; the body's own braces are the first level. */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;

/** A member name shown as a field path as it is; anything else is the body as a whole. */
const FIELD_NAME = /^[A-Za-z_][\w-]{0,99}$/;

/**
 * Where JSON text nests deeper than `maxDepth` levels: the top-level member it happens in (`formValues`),
 * `(body)` when the text is not an object or the member has no plain name; null when it does not.
 * One pass over the text, no recursion and no parse (malformed text is the parser's to reject).
 */
export function jsonTextTooDeep(text: string, maxDepth: number): { path: string } | null {
  let depth = 0;
  let rootIsObject = false;
  let inString = false;
  let escaped = false;
  let stringStart = -1;
  let lastString: [number, number] | null = null;
  let member: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (escaped) escaped = false;
      else if (c === BACKSLASH) escaped = true;
      else if (c === QUOTE) {
        inString = false;
        if (depth === 1) lastString = [stringStart, i + 1];
      }
      continue;
    }
    if (c === QUOTE) {
      inString = true;
      stringStart = i;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (depth === 0) rootIsObject = c === OPEN_OBJECT;
      depth++;
      if (depth > maxDepth) return { path: rootIsObject && member !== null ? member : '(body)' };
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    } else if (c === COLON && depth === 1 && rootIsObject && lastString !== null) {
      member = memberName(text.slice(lastString[0], lastString[1]));
    }
  }
  return null;
}

function memberName(quoted: string): string | null {
  try {
    const name: unknown = JSON.parse(quoted);
    return typeof name === 'string' && FIELD_NAME.test(name) ? name : null;
  } catch {
    return null;
  }
}

/**
 * How deep a parsed JSON value nests (a scalar is 0, `[]` is 1), counting no further than `limit + 1`:
 * iterative, so a value nested far past the limit costs no stack.
 */
export function jsonDepthOver(value: unknown, limit: number): boolean {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: v, depth } = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push({ value: child, depth: depth + 1 });
  }
  return false;
}
