import { z } from 'zod';
import { safeText } from './safe-text';

/** Most characters (code points) of one player input. */
export const MAX_INPUT_CHARS = 16_000;

export const CreateSessionBody = z
  .object({
    worldId: safeText({ max: 200 }).optional(),
    locale: z.enum(['en', 'zh-Hans']).optional(),
  })
  .strict();

export const SubmitInputBody = z
  .object({
    text: safeText({ max: MAX_INPUT_CHARS }),
  })
  .strict();

export type CreateSessionBody = z.infer<typeof CreateSessionBody>;
export type SubmitInputBody = z.infer<typeof SubmitInputBody>;
