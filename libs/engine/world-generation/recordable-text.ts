/** A lone surrogate (a high one not followed by a low one, or a low one not preceded by a high one). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * A model's text as the log can hold it: PostgreSQL jsonb refuses U+0000 and lone surrogates (a
 * model may write either as a JSON escape), so each becomes U+FFFD. What the job reads back is
 * this text, the same on every read; neither character belongs in a world anyway.
 */
export function recordableText(text: string): string {
  return text.replace(LONE_SURROGATE, '\uFFFD').replaceAll('\u0000', '\uFFFD');
}

/** Text well-formed (each lone surrogate U+FFFD), for a request's fields. */
export function wellFormedText(text: string): string {
  return text.replace(LONE_SURROGATE, '\uFFFD');
}
