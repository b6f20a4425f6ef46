import { InvalidInputError } from '../../errors';
import { WORLD_LIMITS, WorldDocument } from '../../plugins-sdk';
import { dottedPath } from '../../text';
import { WorldTooLargeError } from './errors';

/**
 * A world document checked at the boundary: at most `WORLD_LIMITS.documentBytes` as JSON (else
 * `WorldTooLargeError`, 413), then the `WorldDocument` schema (else `InvalidInputError` naming
 * each field's path under `prefix`, 400). Answers the document as the schema gives it (defaults filled).
 */
export function validWorldDocument(input: unknown, options: { prefix?: string } = {}): WorldDocument {
  const prefix = options.prefix ? `${options.prefix}.` : '';
  checkWorldJson(input, options);
  const bytes = Buffer.byteLength(JSON.stringify(input) ?? '', 'utf8');
  if (bytes > WORLD_LIMITS.documentBytes) throw new WorldTooLargeError(bytes, WORLD_LIMITS.documentBytes);
  const parsed = WorldDocument.safeParse(input);
  if (parsed.success) return parsed.data;
  throw new InvalidInputError(
    parsed.error.issues.map((issue) => ({ path: `${prefix}${dottedPath(issue.path)}`.replace(/\.$/, '') || '(body)', message: issue.message })),
    'INVALID_WORLD',
  );
}

/**
 * The checks of a body's JSON shape alone (depth, `__proto__` keys), as a 400 naming the place:
 * run before anything walks the body recursively (a hash of it, a merge patch).
 */
export function checkWorldJson(input: unknown, options: { prefix?: string } = {}): void {
  const prefix = options.prefix ? `${options.prefix}.` : '';
  const problem = structureProblem(input);
  if (problem !== null) throw new InvalidInputError([{ path: `${prefix}${dottedPath(problem.path)}` || '(body)', message: problem.message }], 'INVALID_WORLD');
}

/** The deepest a world document's JSON may nest (its own structure needs 6; `entries` and `extensions` hold free JSON). */
export const MAX_DOCUMENT_DEPTH = 64;

/**
 * The first value nested deeper than `MAX_DOCUMENT_DEPTH`, or the first `__proto__` key (a JSON
 * body's own key that zod's records and objects would drop without a word, or take as the
 * prototype), with its path; null when there is none. Walked without recursion, so any depth is safe.
 */
function structureProblem(input: unknown): { path: PropertyKey[]; message: string } | null {
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value: input, path: [] }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (path.length >= MAX_DOCUMENT_DEPTH) return { path, message: `nested deeper than ${MAX_DOCUMENT_DEPTH} levels` };
    if (Array.isArray(value)) value.forEach((v, i) => stack.push({ value: v, path: [...path, i] }));
    else if (Object.hasOwn(value, '__proto__')) return { path: [...path, '__proto__'], message: 'the key "__proto__" is not accepted' };
    else for (const [k, v] of Object.entries(value)) stack.push({ value: v, path: [...path, k] });
  }
  return null;
}

