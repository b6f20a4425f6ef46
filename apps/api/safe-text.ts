import { z } from 'zod';
import { codePointLength, isWellFormedText } from '../../libs/text';

/** Characters that show nothing: whitespace, controls, format characters (ZWSP, ZWJ, BOM, bidi marks, tags), and
 *  other default-ignorable code points (variation selectors, combining grapheme joiner, Hangul fillers). */
const INVISIBLE = /[\p{White_Space}\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]/gu;

/** True when the text has nothing visible: empty, or only whitespace / zero-width / format characters. */
export function isBlank(text: string): boolean {
  return text.replace(INVISIBLE, '') === '';
}

export interface SafeTextOptions {
  /** Most code points allowed (after trimming). */
  max: number;
  /** Trim leading and trailing whitespace (default true). */
  trim?: boolean;
}

/**
 * The string rules of every body field: well-formed Unicode (no lone surrogate: jsonb and text columns
 * reject it), no NUL (PostgreSQL text rejects it), not blank (zero-width-only counts as empty), at most
 * `max` code points. Returns a plain `ZodString`, so callers can chain more checks (`.regex(...)`, ...).
 */
export function safeText(options: SafeTextOptions): z.ZodString {
  let schema = z
    .string()
    .refine((s) => isWellFormedText(s), { message: 'must be well-formed Unicode (found a lone surrogate)', abort: true })
    .refine((s) => !s.includes('\u0000'), { message: 'must not contain NUL (U+0000)', abort: true });
  if (options.trim !== false) schema = schema.trim();
  return (
    schema
      .refine((s) => !isBlank(s), { message: 'must not be empty', abort: true })
      .refine((s) => codePointLength(s) <= options.max, { message: `must be at most ${options.max} characters` })
      // what the refinements check, for the OpenAPI document (JSON Schema counts lengths in code points, as these rules do)
      .meta({
        minLength: 1,
        maxLength: options.max,
        description: `Well-formed Unicode without NUL, not blank, at most ${options.max} characters (code points)${options.trim !== false ? ' after trimming' : ''}.`,
      })
  );
}
