import { BadRequestException, type PipeTransform } from '@nestjs/common';
import type { ZodType } from 'zod';

/** Validates a request body with a zod schema; bad input is a 400 naming each field path. */
export class ZodBodyPipe<T> implements PipeTransform<unknown, T> {
  constructor(private readonly schema: ZodType<T>) {}

  transform(value: unknown): T {
    const parsed = this.schema.safeParse(value ?? {});
    if (parsed.success) return parsed.data;
    const issues = parsed.error.issues.map((i) => ({ path: i.path.join('.') || '(body)', message: i.message }));
    throw new BadRequestException({
      statusCode: 400,
      error: 'Bad Request',
      message: issues.map((i) => `${i.path}: ${i.message}`).join('; '),
      issues,
    });
  }
}
