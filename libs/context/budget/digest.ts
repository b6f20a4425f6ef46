import { fixedText } from '../fixed-text';
import type { Locale } from '../../plugins-sdk';
import { codePointLength, truncateText } from '../../text';
import { envelopeSummary, parseResult } from './tool-result';
import type { LedgerCall } from './types';

/** Longest arguments preview and result summary of a digest line, in code points (the ellipsis included). */
export const DIGEST_ARGUMENTS_MAX = 120;
export const DIGEST_SUMMARY_MAX = 80;

/**
 * The frozen digest of a collapsed tool group (spec §5): a localized header line, then one line per
 * call, `- <tool> <arguments preview> → ok: <summary>` or `- <tool> <arguments preview> → failed: <code>`.
 * The arguments are the canonical JSON; the summary is an envelope's `summary` member when it is a
 * string, else a preview of its `data` (JSON), else of the whole result. `ok`, `failed` and the
 * codes are not translated (markers and codes stay as they are). Deterministic: no model call, no
 * ids, no timestamps; whitespace runs become one space so a call stays on one line.
 */
export function frozenDigest(calls: readonly LedgerCall[], locale: Locale): string {
  return [fixedText(locale).budgetDigestHeader, ...calls.map(digestLine)].join('\n');
}

function digestLine(call: LedgerCall): string {
  return `- ${call.name} ${preview(call.arguments, DIGEST_ARGUMENTS_MAX)} → ${outcome(call.result)}`;
}

function outcome(result: string): string {
  const parsed = parseResult(result);
  if (parsed.kind !== 'object') return `ok: ${preview(result, DIGEST_SUMMARY_MAX)}`;
  const envelope = parsed.value;
  if (envelope['ok'] === false) {
    const error = envelope['error'];
    const code = error !== null && typeof error === 'object' ? (error as Record<string, unknown>)['code'] : undefined;
    return typeof code === 'string' ? `failed: ${preview(code, DIGEST_SUMMARY_MAX)}` : 'failed';
  }
  const summary = envelopeSummary(envelope);
  if (summary !== undefined) return `ok: ${preview(summary, DIGEST_SUMMARY_MAX)}`;
  if ('data' in envelope) return `ok: ${preview(JSON.stringify(envelope['data']) ?? 'null', DIGEST_SUMMARY_MAX)}`;
  return `ok: ${preview(result, DIGEST_SUMMARY_MAX)}`;
}

/** At most `max` code points on one line, cut on a grapheme boundary with `…` when longer. */
export function preview(text: string, max: number): string {
  const line = text.replace(/\s+/gu, ' ').trim();
  return codePointLength(line) <= max ? line : `${truncateText(line, max - 1)}…`;
}
