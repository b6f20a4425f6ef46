/**
 * Step 3: the card's JSON text to a value. The nesting depth is counted on the text before
 * `JSON.parse` runs (so a file of a million `[` is refused in one linear pass, not by a stack
 * overflow), then every string and key of the value is checked: well-formed Unicode (no lone
 * surrogate, which `"\ud800"` escapes into), no U+0000, and no key `__proto__` (zod drops such a
 * key without a word; a card that holds one is refused, naming its path).
 */
import { isWellFormedText, truncateText } from '../../text';
import { type CardFailure, type CardIssue, dottedPath, failure, MAX_ISSUES } from './result';

/** Where the text first nests deeper than `maxDepth` (a UTF-16 offset), or null. */
function tooDeepAt(text: string, maxDepth: number): number | null {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) return i;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return null;
}

export function parseJson(text: string, options: { maxDepth: number; where: string }): { ok: true; value: unknown } | CardFailure {
  const deep = tooDeepAt(text, options.maxDepth);
  if (deep !== null)
    return failure('TOO_DEEP', { path: options.where, message: `the JSON nests deeper than ${options.maxDepth} levels (at character ${deep + 1})` });
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    const reason = error instanceof Error ? truncateText(error.message, 200) : 'unparsable';
    return failure('BAD_JSON', { path: options.where, message: `not valid JSON: ${reason}` });
  }
}

function stringProblem(s: string): string | null {
  if (!isWellFormedText(s)) return 'holds a lone surrogate (not well-formed Unicode)';
  if (s.includes('\u0000')) return 'holds U+0000 (NUL)';
  return null;
}

/** The strings (and keys) of a parsed JSON value that are not well-formed text, by path. */
export function badStrings(value: unknown): CardIssue[] {
  const issues: CardIssue[] = [];
  const visit = (v: unknown, path: (string | number)[]): void => {
    if (issues.length >= MAX_ISSUES) return;
    if (typeof v === 'string') {
      const problem = stringProblem(v);
      if (problem) issues.push({ path: dottedPath(path), message: `the text ${problem}` });
    } else if (Array.isArray(v)) v.forEach((item, i) => visit(item, [...path, i]));
    else if (v !== null && typeof v === 'object')
      for (const [key, item] of Object.entries(v)) {
        const problem = key === '__proto__' ? 'is "__proto__", which is not accepted' : stringProblem(key);
        // the key itself is written escaped (JSON), so the path stays well-formed text
        if (problem) issues.push({ path: dottedPath([...path, JSON.stringify(key)]), message: `the key ${problem}` });
        else visit(item, [...path, key]);
      }
  };
  visit(value, []);
  return issues;
}

export function checkStrings(value: unknown): { ok: true } | CardFailure {
  const issues = badStrings(value);
  return issues.length ? failure('BAD_STRING', issues) : { ok: true };
}
