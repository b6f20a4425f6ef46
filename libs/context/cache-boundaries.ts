import type { AssembledContext, MessageSectionName, SystemSection, SystemSectionName } from './types';

/** The internal private-use sentinel marking a cache boundary in the system prompt (spec §5). */
export const CACHE_BREAK = '\uE000';

/** Sections after which a boundary is set when non-empty, at most four (spec §5). */
export const CACHE_BOUNDARY_SECTIONS: readonly SystemSectionName[] = ['preamble', 'runtime-body', 'segments', 'worldinfo-after'];

/**
 * Joins the non-empty system sections with one blank line; with `withBoundaries`, the sentinel
 * follows each boundary section. Turn segments come last and set no boundary.
 */
export function serializeSystemPrompt(sections: readonly SystemSection[], withBoundaries: boolean): string {
  return sections
    .filter((s) => s.text.trim() !== '')
    .map((s) => (withBoundaries && CACHE_BOUNDARY_SECTIONS.includes(s.name) ? s.text + CACHE_BREAK : s.text))
    .join('\n\n');
}

/** What adapters of providers without explicit breakpoints send. */
export function stripCacheBreaks(text: string): string {
  return text.split(CACHE_BREAK).join('');
}

/** Splits a serialized system prompt at its boundaries (for adapters that set breakpoints). */
export function splitAtCacheBreaks(text: string): string[] {
  return text.split(CACHE_BREAK).filter((part) => part !== '');
}

/** Sections of the conversation that come before the current turn and repeat from turn to turn. */
const HISTORY: readonly MessageSectionName[] = ['pre-history', 'summary', 'history'];

/**
 * Spec §5 "Anthropic's four boundaries": the index in `messages` of the last message of the
 * history, the one the next turn's request repeats up to; -1 when the request has no history.
 * It is the last pre-history, summary or history message before the current turn (its protected
 * range, which starts with the turn context when there is one), with or without a turn context.
 * Depth insertions are skipped: they move every turn, so a boundary on one is never read again.
 */
export function historyBoundary(context: Pick<AssembledContext, 'messages' | 'messageSections' | 'protectedRange'>): number {
  const end = Math.min(context.protectedRange.start, context.messages.length, context.messageSections.length);
  for (let i = end - 1; i >= 0; i--) if (HISTORY.includes(context.messageSections[i])) return i;
  return -1;
}
