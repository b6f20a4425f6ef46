import type { Request } from 'express';
import { InvalidInputError } from '../../libs/errors';

/** The `ETag` of a world at a revision: the revision, quoted. */
export const revisionTag = (revision: number): string => `"${revision}"`;

/**
 * The revision an `If-Match` header names (`"3"`, also `3` or `W/"3"`), or undefined without the
 * header. Anything else (a list, `*`, not a positive integer) is a 400 naming `If-Match`.
 */
export function ifMatchRevision(req: Request): number | undefined {
  const values = req.headersDistinct['if-match'];
  if (values === undefined) return undefined;
  const match = values.length === 1 ? /^\s*(?:W\/)?"?([1-9]\d{0,8})"?\s*$/.exec(values[0]) : null;
  if (!match) throw new InvalidInputError([{ path: 'If-Match', message: 'must name one revision of the world, e.g. "3" (its ETag)' }], 'INVALID_IF_MATCH');
  return Number(match[1]);
}
