import { z } from 'zod';

/** Shared pieces of the wire shapes: token counts, objects whose unread fields pass through, function names. */
export const count = z.number().int().nonnegative();
export const loose = <T extends z.ZodRawShape>(shape: T) => z.object(shape).passthrough();
export const toolName = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'a function name is 1-64 of a-z, A-Z, 0-9, _ and -');
