import type { PipeTransform } from '@nestjs/common';
import { NotFoundError } from '../../libs/errors';
import { UUID_PATTERN } from './uuid-param.pipe';

/** A built-in world's id (its folder under `worlds/`). */
export const WORLD_SLUG_PATTERN = /^[a-z][a-z0-9-]{0,63}$/;

/**
 * A world id in a path: a tenant's world is a UUID (any letter case), a built-in world its folder's
 * name. Anything else cannot name a world: the same 404 as an unknown one, without echoing it back.
 */
export class WorldIdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (typeof value === 'string' && UUID_PATTERN.test(value)) return value.toLowerCase();
    if (typeof value === 'string' && WORLD_SLUG_PATTERN.test(value)) return value;
    throw new NotFoundError('WORLD_NOT_FOUND', 'world not found');
  }
}
