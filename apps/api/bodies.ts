import { z } from 'zod';
import { canonicalLocaleTag, MAX_LOCALE_TAG_LENGTH } from '../../libs/plugins-sdk';
import { safeText } from './safe-text';

/** Most characters (code points) of one player input. */
export const MAX_INPUT_CHARS = 16_000;

/** Any well-formed BCP 47 tag, stored in its canonical form (`EN-us` → `en-US`). */
const LocaleTag = safeText({ max: MAX_LOCALE_TAG_LENGTH }).transform((tag, ctx) => {
  const canonical = canonicalLocaleTag(tag);
  if (canonical !== null) return canonical;
  ctx.addIssue({ code: 'custom', message: 'must be a well-formed BCP 47 language tag, e.g. en, pt-BR, zh-Hans' });
  return z.NEVER;
});

export const CreateSessionBody = z
  .object({
    worldId: safeText({ max: 200 }).optional(),
    locale: LocaleTag.optional(),
  })
  .strict();

export const SubmitInputBody = z
  .object({
    text: safeText({ max: MAX_INPUT_CHARS }),
  })
  .strict();

export type CreateSessionBody = z.infer<typeof CreateSessionBody>;
export type SubmitInputBody = z.infer<typeof SubmitInputBody>;
