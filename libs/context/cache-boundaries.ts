import type { SystemSection, SystemSectionName } from './types';

/** The internal private-use sentinel marking a cache boundary in the system prompt (spec §5). */
export const CACHE_BREAK = '\uE000';

/** Sections after which a boundary is set when non-empty, at most four (spec §5). */
const BOUNDARY_AFTER: readonly SystemSectionName[] = ['preamble', 'runtime-body', 'segments', 'worldinfo-after'];

/**
 * Joins the non-empty system sections with one blank line; with `withBoundaries`, the sentinel
 * follows each boundary section. Turn segments come last and set no boundary.
 */
export function serializeSystemPrompt(sections: readonly SystemSection[], withBoundaries: boolean): string {
  return sections
    .filter((s) => s.text.trim() !== '')
    .map((s) => (withBoundaries && BOUNDARY_AFTER.includes(s.name) ? s.text + CACHE_BREAK : s.text))
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
