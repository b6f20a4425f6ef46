import type { PipeTransform } from '@nestjs/common';
import { NotFoundError } from '../../libs/errors';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Every path id (`:id`, `:turnId`) is a UUID. Anything else (`%00`, `..`, a 4,000-character string)
 * cannot name a thing that exists: the same 404 as an unknown id, without echoing the bytes back, and
 * it never reaches the database.
 */
export class UuidParamPipe implements PipeTransform<string, string> {
  constructor(private readonly resource: 'session' | 'turn' | 'execution') {}

  transform(value: string): string {
    if (typeof value !== 'string' || !UUID.test(value)) {
      throw new NotFoundError(`${this.resource.toUpperCase()}_NOT_FOUND`, `${this.resource} not found`);
    }
    return value.toLowerCase();
  }
}
