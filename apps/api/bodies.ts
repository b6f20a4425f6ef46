import { z } from 'zod';

export const CreateSessionBody = z
  .object({
    worldId: z.string().min(1).max(200).optional(),
    locale: z.enum(['en', 'zh-Hans']).optional(),
  })
  .strict();

export const SubmitInputBody = z
  .object({
    text: z.string().trim().min(1, 'must not be empty').max(16_000),
  })
  .strict();

export type CreateSessionBody = z.infer<typeof CreateSessionBody>;
export type SubmitInputBody = z.infer<typeof SubmitInputBody>;
