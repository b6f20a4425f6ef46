import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

const digest = (key: string) => createHash('sha256').update(key, 'utf8').digest();

/**
 * The key a request presents: `Authorization: Bearer <key>`, or Basic with the key as the password
 * (what a browser sends after its login prompt; the user name is ignored). Null: none.
 */
export function presentedKey(authorization: string | undefined): string | null {
  if (!authorization) return null;
  const [scheme, value] = authorization.split(/\s+/, 2);
  if (!value) return null;
  if (/^bearer$/i.test(scheme)) return value;
  if (!/^basic$/i.test(scheme)) return null;
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? null : decoded.slice(colon + 1);
}

/** Whether `presented` is the admin key: both hashed first, so the comparison is timing-safe and length-blind. */
export function isAdminKey(presented: string | null, adminKey: string): boolean {
  return presented !== null && timingSafeEqual(digest(presented), digest(adminKey));
}

/**
 * Lets only the operator's admin key (`COVEL_ADMIN_API_KEY`) through; anything else, a tenant's API
 * key included, is a 401 with a Basic challenge (so a browser asks for it). Tenant keys are never
 * looked up here: the admin key is not a tenant's.
 */
export function requireAdminKey(adminKey: string) {
  return (req: Request, res: Response, next: NextFunction) => {
    if (isAdminKey(presentedKey(req.headers.authorization), adminKey)) return next();
    res
      .status(401)
      .setHeader('WWW-Authenticate', 'Basic realm="covel-admin", charset="UTF-8"')
      .json({ error: { code: 'ADMIN_KEY_REQUIRED', message: 'the admin key (COVEL_ADMIN_API_KEY) is required here' } });
  };
}
