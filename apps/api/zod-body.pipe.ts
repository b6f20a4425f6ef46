import type { PipeTransform } from '@nestjs/common';
import type { ZodType } from 'zod';
import { InvalidInputError } from '../../libs/errors';

/**
 * Validates a request body (or query) with a zod schema; bad input is a 400 naming each field
 * path, and `root` (`(body)`, or `(query)` for a query's unknown parameter) for the value as a whole.
 */
export class ZodBodyPipe<T> implements PipeTransform<unknown, T> {
  constructor(
    private readonly schema: ZodType<T>,
    private readonly root: '(body)' | '(query)' = '(body)',
  ) {}

  transform(value: unknown): T {
    const parsed = this.schema.safeParse(value ?? {});
    if (parsed.success) return parsed.data;
    throw new InvalidInputError(parsed.error.issues.map((i) => ({ path: i.path.join('.') || this.root, message: i.message })));
  }
}
