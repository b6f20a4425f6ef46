import type { SlotConfig } from './slots';

/** Counts the tokens of a text (the budget's estimator, `Estimator` in libs/context). */
export type TokenCounter = (text: string) => number;

export type TokenizerName = NonNullable<SlotConfig['tokenizer']>;

/** Encoding modules already loaded, by name (loaded once per process, on first use). */
const loaded = new Map<TokenizerName, Promise<TokenCounter>>();

/**
 * The real tokenizer a slot asks for (`tokenizer` in llm.toml), or null: the caller then uses the
 * spec's character estimate. Why gpt-tokenizer: it is maintained, pure JavaScript with its BPE
 * ranks bundled (works offline, no native build, no download at run time), and it ships both
 * OpenAI encodings: `o200k_base` (GPT-4o, GPT-4.1, the o-series) and `cl100k_base` (GPT-4,
 * GPT-3.5). Imported lazily, only when a slot asks for it: an encoding is several MB to parse, and
 * start-up should not pay for it. Special-token text (`<|endoftext|>`) in content is counted as
 * ordinary text, never refused.
 */
export function slotTokenizer(slot: Pick<SlotConfig, 'tokenizer'>): Promise<TokenCounter> | null {
  const name = slot.tokenizer;
  if (name === undefined) return null;
  let counter = loaded.get(name);
  if (!counter) {
    counter = loadEncoding(name).then((encoding) => (text: string) => encoding.countTokens(text, { disallowedSpecial: new Set() }));
    loaded.set(name, counter);
  }
  return counter;
}

interface Encoding {
  countTokens(text: string, options: { disallowedSpecial: Set<string> }): number;
}

async function loadEncoding(name: TokenizerName): Promise<Encoding> {
  // the CommonJS build by path: the project resolves modules the node10 way (no `exports` map for types)
  if (name === 'o200k_base') return import('gpt-tokenizer/cjs/encoding/o200k_base');
  return import('gpt-tokenizer/cjs/encoding/cl100k_base');
}
