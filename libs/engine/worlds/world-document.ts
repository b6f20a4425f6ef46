import { InvalidInputError } from '../../errors';
import { WORLD_LIMITS, WorldDocument } from '../../plugins-sdk';
import { WorldTooLargeError } from './errors';

/**
 * A world document checked at the boundary: at most `WORLD_LIMITS.documentBytes` as JSON (else
 * `WorldTooLargeError`, 413), then the `WorldDocument` schema (else `InvalidInputError` naming
 * each field's path under `prefix`, 400). Answers the document as the schema gives it (defaults filled).
 */
export function validWorldDocument(input: unknown, options: { prefix?: string } = {}): WorldDocument {
  const prefix = options.prefix ? `${options.prefix}.` : '';
  const deep = tooDeepAt(input);
  if (deep !== null)
    throw new InvalidInputError([{ path: `${prefix}${deep.join('.')}`, message: `nested deeper than ${MAX_DOCUMENT_DEPTH} levels` }], 'INVALID_WORLD');
  const bytes = Buffer.byteLength(JSON.stringify(input) ?? '', 'utf8');
  if (bytes > WORLD_LIMITS.documentBytes) throw new WorldTooLargeError(bytes, WORLD_LIMITS.documentBytes);
  const parsed = WorldDocument.safeParse(input);
  if (parsed.success) return parsed.data;
  throw new InvalidInputError(
    parsed.error.issues.map((issue) => ({ path: `${prefix}${issue.path.map(String).join('.')}`.replace(/\.$/, '') || '(body)', message: issue.message })),
    'INVALID_WORLD',
  );
}

/** The deepest a world document's JSON may nest (its own structure needs 6; `entries` and `extensions` hold free JSON). */
export const MAX_DOCUMENT_DEPTH = 64;

/** The path of the first value nested deeper than `MAX_DOCUMENT_DEPTH`, or null: walked without recursion, so any depth is safe. */
function tooDeepAt(input: unknown): (string | number)[] | null {
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value: input, path: [] }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (path.length >= MAX_DOCUMENT_DEPTH) return path;
    if (Array.isArray(value)) value.forEach((v, i) => stack.push({ value: v, path: [...path, i] }));
    else for (const [k, v] of Object.entries(value)) stack.push({ value: v, path: [...path, k] });
  }
  return null;
}
