import type { PipeTransform } from '@nestjs/common';
import { InvalidInputError } from '../../../libs/errors';
import { TenantLimits } from '../../../libs/events';

/**
 * `PUT /admin/tenants/:id/limits`: the whole `TenantLimits` object (absent fields are the
 * deployment's defaults); a bad one is a 400 `INVALID_LIMITS` naming each field path, an unknown
 * field by its own name. No body at all is a 400 too (`{}` sets the defaults).
 */
export class TenantLimitsBodyPipe implements PipeTransform<unknown, TenantLimits> {
  transform(value: unknown): TenantLimits {
    // no body is a mistake, not "the defaults": `{}` says that
    if (value === undefined)
      throw new InvalidInputError([{ path: '(body)', message: 'required: the limits as a JSON object ({} for the defaults)' }], 'INVALID_LIMITS');
    const parsed = TenantLimits.safeParse(value);
    if (parsed.success) return parsed.data;
    const issues = parsed.error.issues.map((i) => ({
      path: [...i.path, ...('keys' in i && Array.isArray(i.keys) ? [String(i.keys[0])] : [])].join('.') || '(body)',
      message: i.message,
    }));
    throw new InvalidInputError(issues, 'INVALID_LIMITS');
  }
}
