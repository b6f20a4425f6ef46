import { z } from 'zod';
import { canonicalLocaleTag, MAX_LOCALE_TAG_LENGTH } from '../../libs/plugins-sdk';

/** Any well-formed BCP 47 tag, stored in its canonical form (`EN-us` → `en-US`). */
const LocaleTag = z
  .string()
  .max(MAX_LOCALE_TAG_LENGTH)
  .transform((tag, ctx) => {
    const canonical = canonicalLocaleTag(tag);
    if (canonical !== null) return canonical;
    ctx.addIssue({ code: 'custom', message: 'must be a well-formed BCP 47 language tag, e.g. en, pt-BR, zh-Hans' });
    return z.NEVER;
  });

export const CreateSessionBody = z
  .object({
    worldId: z.string().min(1).max(200).optional(),
    locale: LocaleTag.optional(),
  })
  .strict();

export const SubmitInputBody = z
  .object({
    text: z.string().trim().min(1, 'must not be empty').max(16_000),
  })
  .strict();

export type CreateSessionBody = z.infer<typeof CreateSessionBody>;
export type SubmitInputBody = z.infer<typeof SubmitInputBody>;
