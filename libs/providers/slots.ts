import { readFileSync } from 'node:fs';
import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import { EngineError } from '../errors';
import { PriceOverrides } from './prices';

export const SlotConfig = z.object({
  protocol: z.enum(['openai-chat', 'openai-responses', 'anthropic', 'gemini']),
  model: z.string().min(1),
  contextWindow: z.number().int().positive(),
  maxOutputTokens: z.number().int().positive(),
  /**
   * Tokens kept free for the reply (spec §5 "Budget"): the input limit is `contextWindow` minus this,
   * and it caps each call's `maxOutputTokens`. Default: `maxOutputTokens`.
   */
  responseReserve: z.number().int().positive().optional(),
  /** A real tokenizer for the budget's estimate (`token-estimator.ts`); default: the spec's character estimate. */
  tokenizer: z.enum(['o200k_base', 'cl100k_base']).optional(),
  /** Late system messages as wrapped user content (OpenAI default false, Gemini default true). */
  lateSystemAsUser: z.boolean().optional(),
  /** Input settings that override the model table. */
  imageInput: z.boolean().optional(),
  forcedToolChoice: z.boolean().optional(),
  /** Anthropic: cache boundaries from the system sentinels (default true). */
  cacheBoundaries: z.boolean().default(true),
});

export const LlmConfig = z.object({
  slots: z.object({ story: SlotConfig, fast: SlotConfig }).catchall(SlotConfig),
  /** List prices per model (`[prices."<model>"]`), over the built-in ones (`prices.ts`): the inspector's and /metrics' est. $. */
  prices: PriceOverrides.optional(),
});

export type SlotConfig = z.infer<typeof SlotConfig>;
export type LlmConfig = z.infer<typeof LlmConfig>;
export type SlotName = 'story' | 'fast' | (string & {});

/** The slot's response reserve: `responseReserve`, or `maxOutputTokens` when it sets none. */
export function responseReserve(slot: Pick<SlotConfig, 'maxOutputTokens' | 'responseReserve'>): number {
  return slot.responseReserve ?? slot.maxOutputTokens;
}

/** The output limit of one call: `maxOutputTokens`, capped by the response reserve. */
export function callOutputLimit(slot: Pick<SlotConfig, 'maxOutputTokens' | 'responseReserve'>): number {
  return Math.min(slot.maxOutputTokens, responseReserve(slot));
}

export class SlotConfigError extends EngineError {
  readonly code = 'LLM_CONFIG_INVALID';
  readonly category = 'invalid';
  constructor(
    readonly file: string,
    override readonly issues: { path: string; message: string }[],
  ) {
    super(`${file}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
  }
}

/** Parses and validates `llm.toml` text. */
export function parseLlmConfig(text: string, file = 'llm.toml'): LlmConfig {
  let raw: unknown;
  try {
    raw = parseToml(text);
  } catch (error) {
    throw new SlotConfigError(file, [{ path: '(toml)', message: error instanceof Error ? error.message : String(error) }]);
  }
  const parsed = LlmConfig.safeParse(raw);
  if (!parsed.success) {
    throw new SlotConfigError(
      file,
      parsed.error.issues.map((i) => ({ path: keyPath(i.path), message: i.message })),
    );
  }
  return parsed.data;
}

/** A TOML key path: bare keys joined with dots, others quoted (`prices."gpt-4.1-mini".input`). */
function keyPath(path: readonly PropertyKey[]): string {
  return path.map((k) => (typeof k === 'string' && !/^[A-Za-z0-9_-]+$/.test(k) ? JSON.stringify(k) : String(k))).join('.');
}

export function loadLlmConfig(file: string): LlmConfig {
  return parseLlmConfig(readFileSync(file, 'utf8'), file);
}
