import { TomlDate } from 'smol-toml';
import { z } from 'zod';

/** USD per million tokens: a finite number ≥ 0. */
const perMillion = z.number().finite().nonnegative();

/** A calendar date, `YYYY-MM-DD`: a TOML string or a bare TOML local date (`asOf = 2026-12-01`). */
const calendarDate = z
  .union([z.string(), z.instanceof(TomlDate)])
  .transform((v) => (typeof v === 'string' ? v : v.toISOString().slice(0, 10)))
  .pipe(z.iso.date({ message: 'a date, YYYY-MM-DD' }));

/**
 * A model's list prices in `llm.toml` (`[prices."<model>"]`), USD per million tokens, with the date
 * they were taken. An entry replaces the built-in one of the same model whole (its figures belong to
 * its date); `source` says where they come from.
 */
export const ModelPrice = z
  .object({
    input: perMillion.meta({ description: "USD per million input tokens not read from the provider's prompt cache." }),
    cachedInput: perMillion.meta({ description: "USD per million input tokens read from the prompt cache (the provider's cache-hit price)." }),
    output: perMillion.meta({ description: 'USD per million output tokens.' }),
    asOf: calendarDate.meta({ description: 'When the prices were taken: a TOML date or `"YYYY-MM-DD"` (required).' }),
    source: z.string().min(1).optional().meta({ description: 'Where the prices come from (a URL or a note).' }),
  })
  .strict();

export type ModelPrice = z.infer<typeof ModelPrice>;

/** The `[prices]` table of `llm.toml`: model id → price. */
export const PriceOverrides = z.record(z.string().min(1), ModelPrice);
export type PriceOverrides = z.infer<typeof PriceOverrides>;

const ANTHROPIC = 'platform.claude.com/docs/en/about-claude/pricing (stored copy, read 2026-12-05)';
const OPENAI_MODEL_PAGE = 'developers.openai.com/api/docs/models/gpt-5-nano (stored copy, read 2026-12-05)';
const DEEPSEEK = 'api-docs.deepseek.com/quick_start/pricing (stored copy, read 2026-12-05; peak-hour rates)';
/** Secondary: a third-party page quoting the provider's list price on the date given. */
const secondary = (where: string) => `secondary: ${where}`;
const GPT41 = secondary('tokenmath.io (OpenAI model pricing, checked 2026-06-21); cached input 25% of input (api-evangelist, OpenAI page read 2026-11-05)');

/**
 * Built-in list prices for the models of the model table (`model-table.ts`): at least one model of
 * each of its rows. Standard tier, no batch discount; where a provider prices long prompts higher
 * (Gemini Pro > 200k, Haiku 5.5 > 100k) the lower band. Anthropic cache writes are priced as input
 * (the recorded usage does not separate them; the provider charges 1.25× for 5-minute writes).
 * Each entry names its source and date: `llm.toml` overrides any of them (`[prices."<model>"]`).
 */
export const DEFAULT_PRICES: Readonly<Record<string, ModelPrice>> = {
  // ── Anthropic: the provider's pricing page (base input, cache hits, output) ──
  'claude-fable-5-1': { input: 10, cachedInput: 0.25, output: 50, asOf: '2026-12-05', source: ANTHROPIC },
  'claude-mythos-5-1': { input: 10, cachedInput: 0.25, output: 50, asOf: '2026-12-05', source: ANTHROPIC },
  'claude-fable-5': { input: 10, cachedInput: 1, output: 50, asOf: '2026-12-05', source: ANTHROPIC },
  'claude-mythos-5': { input: 10, cachedInput: 1, output: 50, asOf: '2026-12-05', source: ANTHROPIC },
  'claude-opus-5': { input: 5, cachedInput: 0.5, output: 25, asOf: '2026-12-05', source: ANTHROPIC },
  'claude-opus-4-8': { input: 5, cachedInput: 0.5, output: 25, asOf: '2026-12-05', source: ANTHROPIC },
  'claude-opus-4-7': { input: 5, cachedInput: 0.5, output: 25, asOf: '2026-12-05', source: ANTHROPIC },
  'claude-opus-4-6': { input: 5, cachedInput: 0.5, output: 25, asOf: '2026-12-05', source: ANTHROPIC },
  'claude-opus-4-5': { input: 5, cachedInput: 0.5, output: 25, asOf: '2026-12-05', source: ANTHROPIC },
  'claude-opus-4-1': { input: 15, cachedInput: 1.5, output: 75, asOf: '2026-12-05', source: ANTHROPIC },
  'claude-sonnet-4': { input: 3, cachedInput: 0.3, output: 15, asOf: '2026-12-05', source: ANTHROPIC },
  'claude-haiku-3-5': { input: 0.8, cachedInput: 0.08, output: 4, asOf: '2026-12-05', source: ANTHROPIC },
  'claude-sonnet-4-5': { input: 3, cachedInput: 0.3, output: 15, asOf: '2026-03-21', source: secondary('deploybase.ai/articles/claude-api-pricing') },
  'claude-sonnet-4-6': { input: 3, cachedInput: 0.3, output: 15, asOf: '2026-03-21', source: secondary('deploybase.ai/articles/claude-api-pricing') },
  'claude-haiku-4-5': { input: 1, cachedInput: 0.1, output: 5, asOf: '2026-03-21', source: secondary('deploybase.ai/articles/claude-api-pricing') },
  'claude-sonnet-5': { input: 2, cachedInput: 0.2, output: 10, asOf: '2026-10-10', source: secondary('docs.rs/synaps pricing (Anthropic model overview)') },
  'claude-opus-5-5': { input: 4, cachedInput: 0.2, output: 20, asOf: '2026-10-10', source: secondary('docs.rs/synaps pricing (cache read 0.05×)') },
  'claude-sonnet-5-5': {
    input: 2,
    cachedInput: 0.1,
    output: 10,
    asOf: '2026-10-07',
    source: secondary('TheKrush/PromptFuel v1.0.23 (cache read cut to $0.10)'),
  },
  'claude-haiku-5-5': { input: 0.1, cachedInput: 0.01, output: 0.5, asOf: '2026-10-07', source: secondary('TheKrush/PromptFuel v1.0.23 (prompts ≤ 100k)') },
  // ── OpenAI ──
  'gpt-5-nano': { input: 0.05, cachedInput: 0.005, output: 0.4, asOf: '2026-12-05', source: OPENAI_MODEL_PAGE },
  'gpt-4.1': { input: 2, cachedInput: 0.5, output: 8, asOf: '2026-06-21', source: GPT41 },
  'gpt-4.1-mini': { input: 0.4, cachedInput: 0.1, output: 1.6, asOf: '2026-06-21', source: GPT41 },
  'gpt-4.1-nano': { input: 0.1, cachedInput: 0.025, output: 0.4, asOf: '2026-06-21', source: GPT41 },
  'gpt-4o': { input: 2.5, cachedInput: 1.25, output: 10, asOf: '2026-05-01', source: secondary('aimodelcalc / openai-models crate') },
  'gpt-4o-mini': { input: 0.15, cachedInput: 0.075, output: 0.6, asOf: '2026-05-01', source: secondary('aimodelcalc / openai-models crate') },
  'gpt-5': { input: 1.25, cachedInput: 0.125, output: 10, asOf: '2026-06-01', source: secondary('openai-cost crate (2026-Q2)') },
  'gpt-5-mini': { input: 0.25, cachedInput: 0.025, output: 2, asOf: '2026-06-01', source: secondary('openai-cost crate (2026-Q2)') },
  'gpt-5-chat-latest': { input: 1.25, cachedInput: 0.125, output: 10, asOf: '2026-06-01', source: secondary('openai-cost crate (2026-Q2); as gpt-5') },
  'gpt-5-codex': { input: 1.25, cachedInput: 0.125, output: 10, asOf: '2026-06-01', source: secondary('openai-cost crate (2026-Q2); as gpt-5') },
  'gpt-5-pro': { input: 15, cachedInput: 15, output: 120, asOf: '2026-06-01', source: secondary('SciCode show_pricing.py; no cache discount listed') },
  'gpt-5.1': { input: 1.25, cachedInput: 0.125, output: 10, asOf: '2026-06-01', source: secondary('SciCode show_pricing.py; cache read 10%') },
  'gpt-5.4': { input: 2.5, cachedInput: 0.25, output: 15, asOf: '2026-03-01', source: secondary('adk-model crate openai/pricing.rs (March 2026)') },
  'gpt-5.4-mini': { input: 0.75, cachedInput: 0.075, output: 4.5, asOf: '2026-03-01', source: secondary('adk-model crate openai/pricing.rs (March 2026)') },
  o3: { input: 2, cachedInput: 0.5, output: 8, asOf: '2026-06-01', source: secondary('openai-cost crate (2026-Q2)') },
  'o4-mini': { input: 1.1, cachedInput: 0.275, output: 4.4, asOf: '2026-06-01', source: secondary('oG-Memory rate_cards.yaml') },
  // ── Google Gemini (prompts ≤ 200k; implicit-cache reads at 10%) ──
  'gemini-2.5-flash': {
    input: 0.3,
    cachedInput: 0.03,
    output: 2.5,
    asOf: '2026-03-01',
    source: secondary("deploybase.ai/articles/gemini-api-pricing (Google's page, March 2026)"),
  },
  'gemini-2.5-pro': {
    input: 1.25,
    cachedInput: 0.125,
    output: 10,
    asOf: '2026-03-01',
    source: secondary("deploybase.ai/articles/gemini-api-pricing (Google's page, March 2026)"),
  },
  'gemini-2.5-flash-lite': { input: 0.1, cachedInput: 0.01, output: 0.4, asOf: '2026-01-01', source: secondary('aifreeapi.com Gemini API pricing 2026') },
  'gemini-3-pro-preview': { input: 2, cachedInput: 0.2, output: 12, asOf: '2026-01-01', source: secondary('aifreeapi.com Gemini API pricing 2026') },
  // ── DeepSeek (peak hours: off-peak is half) ──
  'deepseek-flash': { input: 0.3, cachedInput: 0.006, output: 1.2, asOf: '2026-12-05', source: DEEPSEEK },
  'deepseek-v4-flash': { input: 0.3, cachedInput: 0.006, output: 1.2, asOf: '2026-12-05', source: `${DEEPSEEK}; legacy name served by deepseek-flash` },
  'deepseek-v4-pro': { input: 1.32, cachedInput: 0.044, output: 3.96, asOf: '2026-12-05', source: DEEPSEEK },
  // ── Qwen (Model Studio, international) ──
  'qwen-plus': {
    input: 0.26,
    cachedInput: 0.26,
    output: 0.78,
    asOf: '2026-05-08',
    source: secondary('OpenRouter-style listings (puter, wavespeed); no cache price listed'),
  },
};

/** A dated snapshot id (`gpt-4.1-mini-2025-04-14`, `claude-sonnet-4-5-20250929`) without its date. */
const undated = (model: string): string => model.replace(/-(\d{4}-\d{2}-\d{2}|\d{8})$/, '');

/** The prices in force: the built-in table with `llm.toml`'s `[prices]` over it. */
export class PriceTable {
  private readonly prices: ReadonlyMap<string, ModelPrice>;

  constructor(overrides: PriceOverrides = {}, defaults: Readonly<Record<string, ModelPrice>> = DEFAULT_PRICES) {
    this.prices = new Map(Object.entries({ ...defaults, ...overrides }));
  }

  /** The price of a model id (exact, or a dated snapshot of a priced id); null: no price. */
  priceOf(model: string): ModelPrice | null {
    return this.prices.get(model) ?? this.prices.get(undated(model)) ?? null;
  }

  /** Every priced model id. */
  models(): string[] {
    return [...this.prices.keys()];
  }
}
