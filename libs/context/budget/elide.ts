import { fixedText } from '../fixed-text';
import type { Locale } from '../../plugins-sdk';
import { codePointLength } from '../../text';
import { envelopeSummary, parseResult } from './tool-result';

/** Envelope members an elision keeps (spec §5: summary, error and staged; `ok` too, so success stays readable). */
const KEPT_MEMBERS: ReadonlySet<string> = new Set(['ok', 'summary', 'error', 'staged']);

/**
 * The elided form of one tool result (spec §5 "Elision"):
 * - a JSON object envelope keeps `ok`, `summary`, `error` and `staged` (in their order; a `summary`
 *   string inside an object `data` — a plugin tool's result — is kept as the envelope's `summary`) and every
 *   other member (`data`, …) is replaced by one member `"elided": "<omission marker>"`, e.g.
 *   `{"ok":true,"summary":"3 rows","elided":"[omitted to save context]"}`;
 * - a string result (text that is not JSON, or a JSON string) becomes the omission marker;
 * - a non-string result (a JSON number, boolean, null or array) stays unchanged.
 * A result the elision would not make shorter (code points) stays unchanged too. Pure and
 * deterministic: replaying it on the same content gives the same text.
 */
export function elideResult(content: string, locale: Locale): string {
  const marker = fixedText(locale).budgetOmitted;
  const parsed = parseResult(content);
  let elided: string;
  if (parsed.kind === 'json') return content;
  if (parsed.kind === 'text') elided = marker;
  else {
    const kept: Record<string, unknown> = {};
    let dropped = false;
    for (const [k, v] of Object.entries(parsed.value)) {
      if (KEPT_MEMBERS.has(k)) kept[k] = v;
      else dropped = true;
    }
    if (!dropped) return content;
    // a plugin tool's summary sits in `data`: it stays, as the envelope's summary
    const summary = envelopeSummary(parsed.value);
    if (summary !== undefined && !('summary' in kept)) kept['summary'] = summary;
    kept['elided'] = marker;
    elided = JSON.stringify(kept);
  }
  return codePointLength(elided) < codePointLength(content) ? elided : content;
}
