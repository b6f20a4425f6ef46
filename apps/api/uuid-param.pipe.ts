import type { PipeTransform } from '@nestjs/common';
import { NotFoundError } from '../../libs/errors';

/** A UUID in any letter case (written out: JSON Schema patterns take no flags, and the OpenAPI document repeats it). */
export const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/**
 * Every path id (`:id`, `:turnId`) is a UUID. Anything else (`%00`, `..`, a 4,000-character string)
 * cannot name a thing that exists: the same 404 as an unknown id, without echoing the bytes back, and
 * it never reaches the database.
 */
export class UuidParamPipe implements PipeTransform<string, string> {
  constructor(private readonly resource: 'session' | 'turn' | 'execution' | 'world-generation' | 'message' | 'api-key' | 'tenant') {}

  transform(value: string): string {
    if (typeof value !== 'string' || !UUID_PATTERN.test(value)) {
      throw new NotFoundError(`${this.resource.toUpperCase().replaceAll('-', '_')}_NOT_FOUND`, `${this.resource.replaceAll('-', ' ')} not found`);
    }
    return value.toLowerCase();
  }
}
