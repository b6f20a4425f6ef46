/**
 * The system prompt's cache-boundary sentinel, the same private-use character libs/context
 * writes (spec §5). Adapters of providers without explicit breakpoints strip it.
 */
export const CACHE_BREAK = '\uE000';

export function stripCacheBreaks(text: string): string {
  return text.split(CACHE_BREAK).join('');
}
