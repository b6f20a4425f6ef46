import { readFileSync } from 'node:fs';
import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import { EngineError } from '../errors';
import { type CallDeadlines, DEFAULT_CALL_DEADLINES, MAX_CALL_DEADLINE_MS } from './call-deadlines';
import { PriceOverrides } from './prices';

const about = (description: string) => ({ description });

/** One of a slot's call deadlines (ms): optional, a positive integer, at most MAX_CALL_DEADLINE_MS (Node's timers fire at once past 2^31-1). */
const callDeadlineMs = (description: string) =>
  z
    .number()
    .int()
    .positive()
    .max(MAX_CALL_DEADLINE_MS, { error: `at most ${MAX_CALL_DEADLINE_MS} (24 h)` })
    .optional()
    .meta(about(description));

/**
 * Explicit reasoning for the calls of a slot (spec §3: the preset's provider metadata). It wins over
 * a runtime's `agent.reasoning: false`; enabled thinking turns a forced tool choice into `auto` on
 * Anthropic and Qwen.
 */
export const ReasoningConfig = z
  .object({
    enabled: z.boolean().meta(about('`true`: the model reasons (thinks); `false`: its off value, where the model has one (the model table).')),
    effort: z
      .enum(['low', 'medium', 'high'])
      .optional()
      .meta(about("With `enabled = true`: how much (OpenAI effort, Anthropic / Gemini thinking budget, DeepSeek effort). Default: the model family's own.")),
  })
  .strict();

/**
 * The tool choice of the calls of a slot: `auto` and `none` are sent as they are; `required` forces
 * a tool where the provider accepts it (spec §3). A tool is named by a runtime (`agent.toolChoice`),
 * never by a slot, whose runtimes have different tools.
 */
export const ToolChoiceConfig = z.enum(['auto', 'none', 'required']);

/** What a slot, a preset or a player may set on a slot's requests: both win over the runtime's `agent` preferences (spec §3). */
const requestSettings = {
  reasoning: ReasoningConfig.optional().meta(
    about(
      'Explicit reasoning, e.g. `{ enabled = true, effort = "high" }` or `{ enabled = false }`: wins over a runtime\'s `agent.reasoning: false` (spec §3).',
    ),
  ),
  toolChoice: ToolChoiceConfig.optional().meta(
    about(
      "`auto` or `none`: sent as it is, over a runtime's `agent.toolChoice`; `required`: a tool must be called (falls back to `auto` where the provider refuses a forced choice).",
    ),
  ),
};

/** One `[presets.<name>]` table: request settings a slot takes by naming it (`preset`). */
export const PresetConfig = z.object(requestSettings).strict();

/** One `[slots.<name>]` table of `llm.toml`; the descriptions are docs/configuration.md's (`npm run docs:config`). */
export const SlotConfig = z
  .object({
    protocol: z
      .enum(['openai-chat', 'openai-responses', 'anthropic', 'gemini'])
      .meta(about('The wire protocol (adapter). OpenAI-compatible endpoints (DeepSeek, Qwen, local relays) use `openai-chat`.')),
    model: z.string().min(1).meta(about('The model id sent to the provider; what it can do comes from the model table (`model-table.ts`).')),
    contextWindow: z.number().int().positive().meta(about("The model's context window, in tokens.")),
    maxOutputTokens: z.number().int().positive().meta(about('Output limit of one call, in tokens (capped by `responseReserve`).')),
    responseReserve: z
      .number()
      .int()
      .positive()
      .optional()
      .meta(
        about(
          'Tokens kept free for the reply (spec §5 "Budget"): the input limit is `contextWindow` minus this, and it caps each call\'s `maxOutputTokens`. Default: `maxOutputTokens`. Must be smaller than `contextWindow`.',
        ),
      ),
    tokenizer: z
      .enum(['o200k_base', 'cl100k_base'])
      .optional()
      .meta(
        about(
          "A real tokenizer for the budget's estimate (`gpt-tokenizer`): `o200k_base` (GPT-4o, GPT-4.1, o-series) or `cl100k_base` (GPT-4, GPT-3.5). Default: the spec's character estimate.",
        ),
      ),
    lateSystemAsUser: z.boolean().optional().meta(about('Late system messages sent as wrapped user content. Default: false on OpenAI, true on Gemini.')),
    imageInput: z.boolean().optional().meta(about('Overrides the model table: the model takes images.')),
    forcedToolChoice: z.boolean().optional().meta(about('Overrides the model table: the model accepts a forced tool choice.')),
    firstByteTimeoutMs: callDeadlineMs(
      "A streamed call fails (`PROVIDER_DEADLINE`) when its stream sends no first event within this many ms (the SDK's own retries included). Default 90000, at most 86400000 (24 h).",
    ),
    idleTimeoutMs: callDeadlineMs(
      'A streamed call fails (`PROVIDER_DEADLINE`) when its stream sends nothing for this many ms between two events. Default 60000, at most 86400000 (24 h).',
    ),
    totalTimeoutMs: callDeadlineMs(
      'A call without streaming (the non-streaming fallback, summaries, world generation) fails (`PROVIDER_DEADLINE`) without its whole answer within this many ms. Default 150000, at most 86400000 (24 h).',
    ),
    cacheBoundaries: z.boolean().default(true).meta(about("Anthropic: `cache_control` boundaries from the system prompt's sentinels.")),
    preset: z
      .string()
      .min(1)
      .optional()
      .meta(about('A `[presets.<name>]` whose `reasoning` and `toolChoice` this slot takes (its own `reasoning` / `toolChoice` win).')),
    ...requestSettings,
  })
  .strict();

export const LlmConfig = z
  .object({
    slots: z
      .object({ story: SlotConfig, fast: SlotConfig })
      .catchall(SlotConfig)
      .meta(
        about(
          "The model slots, by name: a runtime's manifest picks one (`slot`, default `story`); compaction summaries use `fast`. `story` and `fast` are required; more may be added.",
        ),
      ),
    presets: z
      .record(z.string(), PresetConfig)
      .optional()
      .meta(
        about(
          'Named request settings (`[presets.<name>]`) a slot takes with `preset = "<name>"`: `reasoning` and `toolChoice` for every call of the slot, below the slot\'s own and the player\'s (`PATCH /v1/sessions/:id/preferences`).',
        ),
      ),
    prices: PriceOverrides.optional().meta(
      about(
        'List prices per model (`[prices."<model>"]`), over the built-in ones (`libs/providers/prices.ts`): the est. $ of the inspector, `/metrics` and `npm run bench`. An entry replaces that model\'s built-in price as a whole.',
      ),
    ),
  })
  .strict()
  .superRefine((config, ctx) => {
    for (const [name, slot] of Object.entries(config.slots)) {
      if (slot.preset !== undefined && !Object.hasOwn(config.presets ?? {}, slot.preset)) {
        ctx.addIssue({ code: 'custom', path: ['slots', name, 'preset'], message: `no [presets.${slot.preset}] in the file` });
      }
    }
  });

export type SlotConfig = z.infer<typeof SlotConfig>;
export type PresetConfig = z.infer<typeof PresetConfig>;
export type LlmConfig = z.infer<typeof LlmConfig>;
export type SlotName = 'story' | 'fast' | (string & {});

/** The slot's response reserve: `responseReserve`, or `maxOutputTokens` when it sets none. */
export function responseReserve(slot: Pick<SlotConfig, 'maxOutputTokens' | 'responseReserve'>): number {
  return slot.responseReserve ?? slot.maxOutputTokens;
}

/** The slot's call deadlines: its own settings over `DEFAULT_CALL_DEADLINES`. */
export function callDeadlines(slot: Pick<SlotConfig, 'firstByteTimeoutMs' | 'idleTimeoutMs' | 'totalTimeoutMs'>): CallDeadlines {
  return {
    firstByteMs: slot.firstByteTimeoutMs ?? DEFAULT_CALL_DEADLINES.firstByteMs,
    idleMs: slot.idleTimeoutMs ?? DEFAULT_CALL_DEADLINES.idleMs,
    totalMs: slot.totalTimeoutMs ?? DEFAULT_CALL_DEADLINES.totalMs,
  };
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
      // an unknown key (a typo, `tool_choice` for `toolChoice`) is named itself
      parsed.error.issues.flatMap((i) =>
        i.code === 'unrecognized_keys'
          ? i.keys.map((key) => ({ path: keyPath([...i.path, key]), message: 'unknown key' }))
          : [{ path: keyPath(i.path), message: i.message }],
      ),
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
