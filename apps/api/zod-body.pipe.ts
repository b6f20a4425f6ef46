import type { PipeTransform } from '@nestjs/common';
import { compile, type ZodType } from 'zod';
import { InvalidInputError } from '../../libs/errors';

/**
 * Validates a request body (or query) with a zod schema; bad input is a 400 naming each field
 * path, and `root` (`(body)`, or `(query)` for a query's unknown parameter) for the value as a whole.
 */
export class ZodBodyPipe<T> implements PipeTransform<unknown, T> {
  private compiled: ZodType<T> | undefined;

  /**
   * The schema is compiled (`z.compile`: a generated parser tried first, the schema's own parse on
   * anything it does not accept, so a refusal names the same issues): every request of the route
   * runs it (issue 33: CPU per request). A schema it cannot compile is parsed as it is. Compiled at
   * the route's first request, not here: the pipes are made as the controllers' modules load, and
   * every process and test file that loads the API would compile every route's schema.
   */
  constructor(
    private readonly schema: ZodType<T>,
    private readonly root: '(body)' | '(query)' = '(body)',
  ) {}

  transform(value: unknown): T {
    this.compiled ??= compile(this.schema);
    const parsed = this.compiled.safeParse(value ?? {});
    if (parsed.success) return parsed.data;
    throw new InvalidInputError(parsed.error.issues.map((i) => ({ path: i.path.join('.') || this.root, message: i.message })));
  }
}
