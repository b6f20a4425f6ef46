import { createHash } from 'node:crypto';
import { estimateTokens } from '../text';

/**
 * OpenAI's automatic cache: prompts of 1,024 tokens or more (provider-caching.md §2 [V]), hits in
 * 128-token increments (1,024, 1,152, 1,280, ...) on the models before GPT-5.6 (the fact sheet's [U];
 * stated in OpenAI's "Prompt Caching 201" cookbook, openai/openai-cookbook
 * examples/Prompt_Caching_201.ipynb §1.1); routed by model and `prompt_cache_key`.
 */
export const OPENAI_PREFIX_CACHE = { minTokens: 1024, stepTokens: 128 } as const;

/**
 * Automatic prefix caching (OpenAI, Gemini implicit): the longest common prefix with an earlier
 * request under the same key counts as cached once it reaches the minimum, in `step`-token steps.
 */
export class AutomaticPrefixCache {
  private readonly seen = new Map<string, string[]>();
  constructor(private readonly options: { minTokens: number; stepTokens: number; keep?: number }) {}

  /** Cached tokens for this prompt, then remembers it. */
  lookup(key: string, prompt: string): number {
    const earlier = this.seen.get(key) ?? [];
    let best = 0;
    for (const e of earlier) best = Math.max(best, commonPrefixLength(e, prompt));
    const total = estimateTokens(prompt);
    const shared = estimateTokens(prompt.slice(0, best));
    let cached = 0;
    if (total >= this.options.minTokens && shared >= this.options.minTokens) {
      cached = this.options.minTokens + Math.floor((shared - this.options.minTokens) / this.options.stepTokens) * this.options.stepTokens;
    }
    this.seen.set(key, [...earlier, prompt].slice(-(this.options.keep ?? 16)));
    return Math.min(cached, total);
  }
}

/** Chunk lengths compared whole (`commonPrefixLength`), longest first. */
const PREFIX_CHUNKS = [4096, 256, 16];

/**
 * The length (UTF-16 code units) of the longest common prefix. Whole chunks are compared as strings
 * first (the engine's native compare, about 20 times faster than a JavaScript loop over the
 * characters), then the chunk where they differ character by character: a prompt shares tens of
 * thousands of characters with each earlier one under its key, and every request compares itself
 * with up to 16 of them (it was the emulator's largest cost on long sessions).
 */
export function commonPrefixLength(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  for (const step of PREFIX_CHUNKS) while (i + step <= n && a.slice(i, i + step) === b.slice(i, i + step)) i += step;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/**
 * Anthropic's explicit breakpoints: each breakpoint writes one entry (the cumulative hash of the
 * prefix ending at its block); a read checks the breakpoint, then walks back up to 20 blocks for
 * entries earlier requests wrote. Prompts below the minimum are not cached at all.
 */
export class BreakpointCache {
  private readonly entries = new Set<string>();
  constructor(private readonly minTokens: (model: string) => number) {}

  lookup(model: string, blocks: readonly { text: string; breakpoint: boolean }[]): { read: number; created: number; uncached: number } {
    const hashes: string[] = [];
    const tokensUpTo: number[] = [];
    const h = createHash('sha256');
    let tokens = 0;
    for (const b of blocks) {
      h.update(b.text);
      hashes.push(`${model}:${h.copy().digest('hex')}`);
      tokens += estimateTokens(b.text);
      tokensUpTo.push(tokens);
    }
    const total = tokens;
    const min = this.minTokens(model);
    const breakpoints = blocks.map((b, i) => (b.breakpoint ? i : -1)).filter((i) => i >= 0);
    if (total < min || breakpoints.length === 0) return { read: 0, created: 0, uncached: total };
    let readAt = -1;
    for (const bp of breakpoints) {
      for (let i = bp; i >= Math.max(0, bp - 19); i--) {
        if (this.entries.has(hashes[i])) {
          readAt = Math.max(readAt, i);
          break;
        }
      }
    }
    const read = readAt >= 0 ? tokensUpTo[readAt] : 0;
    const last = breakpoints[breakpoints.length - 1];
    for (const bp of breakpoints) if (tokensUpTo[bp] >= min) this.entries.add(hashes[bp]);
    const created = last > readAt && tokensUpTo[last] >= min ? tokensUpTo[last] - read : 0;
    return { read, created, uncached: total - read - created };
  }
}
