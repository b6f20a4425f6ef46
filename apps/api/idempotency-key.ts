import type { Request } from 'express';
import { z } from 'zod';
import { IDEMPOTENCY_KEY_HEADER } from '../../libs/engine';
import { InvalidInputError } from '../../libs/errors';

/** Set on an answer that replays an earlier request with the same Idempotency-Key (the metrics count it). */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** The header's name as Node keys `headers` and `headersDistinct`. */
const HEADER_NAME = IDEMPOTENCY_KEY_HEADER.toLowerCase();

/** At most 255 characters, none of them a control character (C0, DEL or C1). */
export const IdempotencyKeyHeader = z
  .string()
  .min(1, 'must not be empty')
  .max(255, 'must be at most 255 characters')
  .regex(/^\P{Cc}*$/u, 'must not contain control characters');

/**
 * The request's `Idempotency-Key`, or undefined when it has none. A malformed key (empty, too
 * long, control characters, given twice) is a 400 naming the header.
 */
export function idempotencyKeyOf(req: Request): string | undefined {
  // most requests have none: `headers` (built once per request anyway) says so without building
  // `headersDistinct` (every header again), twice per input (the budget gate and the route)
  if (req.headers[HEADER_NAME] === undefined) return undefined;
  const values = req.headersDistinct[HEADER_NAME];
  if (values === undefined) return undefined;
  const fail = (message: string): never => {
    throw new InvalidInputError([{ path: IDEMPOTENCY_KEY_HEADER, message }], 'INVALID_IDEMPOTENCY_KEY');
  };
  if (values.length !== 1) return fail('must be given once');
  const parsed = IdempotencyKeyHeader.safeParse(values[0]);
  return parsed.success ? parsed.data : fail(parsed.error.issues[0].message);
}
