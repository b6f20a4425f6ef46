import type { PipeTransform } from '@nestjs/common';
import { compile, type ZodType } from 'zod';
import { InvalidInputError } from '../../libs/errors';

export interface ZodBodyPipeOptions<T> {
  /**
   * A schema tried first (compiled) for the usual value, where `schema` itself does not compile: it must
   * accept only what `schema` accepts, and answer it alike. What it refuses is parsed by `schema`, so a
   * refusal names the same issues.
   */
  usual?: ZodType<T>;
}

/**
 * Validates a request body (or query) with a zod schema; bad input is a 400 naming each field
 * path, and `root` (`(body)`, or `(query)` for a query's unknown parameter) for the value as a whole.
 */
export class ZodBodyPipe<T> implements PipeTransform<unknown, T> {
  private compiled: ZodType<T> | undefined;
  private usual: ZodType<T> | undefined;

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
    private readonly options: ZodBodyPipeOptions<T> = {},
  ) {}

  transform(value: unknown): T {
    const input = value ?? {};
    if (this.options.usual) {
      this.usual ??= compile(this.options.usual);
      const usual = this.usual.safeParse(input);
      if (usual.success) return usual.data;
    }
    this.compiled ??= compile(this.schema);
    const parsed = this.compiled.safeParse(input);
    if (parsed.success) return parsed.data;
    throw new InvalidInputError(parsed.error.issues.map((i) => ({ path: i.path.join('.') || this.root, message: i.message })));
  }
}
