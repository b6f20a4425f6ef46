import { z } from 'zod';
import { InvalidInputError } from '../../errors';

/** Where a page of `GET /v1/worlds` ends: in the built-in worlds (by id), or in the tenant's (by creation position). */
export type WorldCursor = { kind: 'built-in'; id: string } | { kind: 'tenant'; position: string };

const MAX_BIGINT = 2n ** 63n - 1n;

const Cursor = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('built-in'), id: z.string().min(1).max(200) }).strict(),
  z
    .object({
      kind: z.literal('tenant'),
      // a global position: a PostgreSQL bigint (a larger number would fail the read, not name a place)
      position: z
        .string()
        .regex(/^\d{1,19}$/)
        .refine((p) => BigInt(p) <= MAX_BIGINT),
    })
    .strict(),
]);

/** The opaque cursor text (base64url JSON). */
export function encodeWorldCursor(cursor: WorldCursor): string {
  return Buffer.from(JSON.stringify(cursor), 'utf8').toString('base64url');
}

/** A cursor `encodeWorldCursor` made; anything else is a 400 naming `cursor`. */
export function decodeWorldCursor(text: string): WorldCursor {
  let value: unknown = null;
  try {
    if (/^[A-Za-z0-9_-]{1,400}$/.test(text)) value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    value = null;
  }
  const parsed = Cursor.safeParse(value);
  if (!parsed.success) throw new InvalidInputError([{ path: 'cursor', message: 'not a cursor this API gave (use nextCursor of the page before)' }], 'INVALID_CURSOR');
  return parsed.data;
}
