import { z } from 'zod';
import type { ExtensionPoint, Locale } from './manifest';
import { SegmentPosition } from './manifest';
import { JsonSchemaObject, type LoadedWorld, WorldDimension } from './world';
import { PublishedCharacters } from './session-characters';
import type { characterSheetSegments, currentCharacterOf, primarySeat, worldCharacterSheets } from '../data-boundary';
import type { createPromptLoader } from './prompt-loader';
import type { byCodeUnits, foldKey, rosterLines } from './roster';
import type { clipLine } from './summary-line';

/**
 * What a plugin's server entry is given (PLUGIN-API.md "The server entry"): `register(api)` is
 * called once per plugin at start-up. Every name here is the spec's.
 */

/** Points with one provider at most: a second registration stops start-up. */
export const SINGLE_PROVIDER_POINTS: readonly ExtensionPoint[] = ['history.compact@2'];

export const HOOK_NAMES = ['PostContextAssembly', 'PreLLMCall'] as const;
export type HookName = (typeof HOOK_NAMES)[number];

/** A message of the committed history, as `prompt.history-transform@1` gets and returns it. */
export const HistoryMessageSchema = z
  .object({
    messageId: z.string().min(1),
    turnId: z.string().min(1),
    role: z.enum(['user', 'assistant', 'system']),
    sourceType: z.enum(['player', 'runtime', 'system']),
    pluginId: z.string().nullable(),
    runtimeId: z.string().nullable(),
    outputKind: z.enum(['story', 'structured', 'none']).nullable(),
    text: z.string(),
  })
  .strict();
export type PluginHistoryMessage = z.infer<typeof HistoryMessageSchema>;

/** Why a returned `providerPluginId` is refused: the host sets it (spec §3). */
export const PROVIDER_ID_MESSAGE = 'providerPluginId is set by the host: a plugin cannot claim a segment for any plugin';

/** A segment as a `prompt.segment@1` handler returns it (the host adds `providerPluginId`). */
export const ReturnedSegment = z
  .object({
    id: z.string().min(1),
    content: z.string(),
    position: SegmentPosition,
    audience: z.union([z.literal('self'), z.literal('story'), z.object({ contract: z.string().min(1) }).strict()]).optional(),
    volatility: z.enum(['stable', 'session', 'turn']),
    role: z.enum(['system', 'user', 'assistant']).default('system'),
    order: z.number().int().default(0),
    providerPluginId: z.never({ error: PROVIDER_ID_MESSAGE }).optional(),
  })
  .strict();
export type ReturnedSegment = z.input<typeof ReturnedSegment>;

/** A message of an assembled context, as the hooks see it. */
export const HookMessage = z.object({
  role: z.enum(['system', 'user', 'assistant']),
  content: z.string(),
  images: z.array(z.object({ mediaId: z.string(), description: z.string() }).strict()).optional(),
});
export type HookMessage = z.infer<typeof HookMessage>;

/** A message of the request a `PreLLMCall` hook sees (provider-neutral; `system` first). */
export const RequestMessage = z.object({ role: z.enum(['system', 'user', 'assistant']), content: z.string(), endsHistory: z.boolean().optional() }).strict();
export type RequestMessage = z.infer<typeof RequestMessage>;

/**
 * What a `session.world-context@1` provider returns (spec §3): more of the world's schema, more
 * structured entries, the current value of dynamic dimensions keyed by dimension id, and the
 * session's characters as they are now (spec §4: `player.character` and `characters.npcs` "change
 * as the story goes on"; `withPublishedCharacters`).
 */
export const WorldContextResult = z
  .object({
    schema: JsonSchemaObject.optional(),
    entries: z.array(z.record(z.string(), z.unknown())).optional(),
    dimensions: z.record(z.string().regex(/^[A-Za-z][A-Za-z0-9_-]*$/), WorldDimension).optional(),
    characters: PublishedCharacters.optional(),
  })
  .strict();
export type WorldContextResult = z.infer<typeof WorldContextResult>;

/** A saved summary segment, as `history.compact@2` gets it (oldest first). */
export interface CompactSummaryView {
  readonly summaryId: string;
  readonly content: string;
  /** The messages this segment stands for, oldest first (a merged segment: all of its sources'). */
  readonly messageIds: readonly string[];
  readonly truncated: boolean;
}

/**
 * What the `history.compact@2` provider is given (spec §1 "History compaction"). The framework has
 * decided that compaction is needed; the provider chooses what to summarize and writes the summaries.
 * Token figures are the framework's estimates (`ctx.estimateTokens`).
 */
export interface CompactInput {
  /** The uncompacted history as the prompt shows it (after `prompt.history-transform@1`), oldest first. */
  readonly messages: readonly PluginHistoryMessage[];
  /** The saved summaries, oldest first. */
  readonly summaries: readonly CompactSummaryView[];
  readonly windows: Readonly<{
    /** The smaller input capacity of the story and the fast model, each after its response reserve. */
    effective: number;
    /** The fast (summary) model's own input capacity after its response reserve. */
    fastInput: number;
  }>;
}

/** One summary segment a provider returns: it covers new messages or old summaries, never both. */
export const CompactSegment = z
  .object({
    /** New messages, a continuous uncompacted prefix (after the segments before it in this result). */
    messageIds: z.array(z.string().min(1)),
    /** Old summaries it merges, continuous from the oldest. */
    replacesSummaryIds: z.array(z.string().min(1)),
    content: z.string().min(1),
    focusSections: z.array(z.string()),
    /** The summary was shortened on purpose to fit the budget. */
    truncated: z.boolean().optional(),
  })
  .strict();
export type CompactSegment = z.infer<typeof CompactSegment>;

/** The `history.compact@2` result: no segments means "nothing to compact now". */
export const CompactResult = z.object({ summaries: z.array(CompactSegment) }).strict();
export type CompactResult = z.infer<typeof CompactResult>;

/** A summary model call's answer: `finishReason: 'length'` means the reply was cut (the framework discards it). */
export interface SummaryReply {
  readonly text: string;
  readonly finishReason: 'stop' | 'length' | 'other';
}

/** The summary model (the `fast` slot) as a compaction provider calls it; every call is recorded in the log. */
export interface SummaryModel {
  complete(request: { system: string; prompt: string; maxOutputTokens: number }): Promise<SummaryReply>;
}

/** What the `history.compact@2` provider is given besides its input. */
export type CompactionContext = HandlerContext & {
  readonly summaryModel: SummaryModel;
  /** The framework's token estimate of a text (the one its budgets use). */
  estimateTokens(text: string): number;
};

/**
 * Points whose providers a plugin reads itself, through `ctx.services(point)` (a service), instead of
 * the host assembling their results into a request.
 */
export const SERVICE_POINTS = ['memory.block-definitions@1'] as const satisfies readonly ExtensionPoint[];
export type ServicePoint = (typeof SERVICE_POINTS)[number];

/**
 * One memory block a `memory.block-definitions@1` provider defines: an id, how it is shown, what it
 * holds, and its size limit in characters (Unicode code points). `initial` is its text before any edit.
 */
export const MemoryBlockDefinition = z
  .object({
    id: z.string().regex(/^[a-z][a-z0-9-]*$/, 'a block id: lower-case letters, digits, dashes'),
    label: z.string().min(1),
    description: z.string().optional(),
    limit: z.number().int().positive(),
    initial: z.string().optional(),
  })
  .strict();
export type MemoryBlockDefinition = z.infer<typeof MemoryBlockDefinition>;

/** What a `memory.block-definitions@1` provider returns. */
export const MemoryBlockDefinitions = z.object({ blocks: z.array(MemoryBlockDefinition) }).strict();
export type MemoryBlockDefinitions = z.infer<typeof MemoryBlockDefinitions>;

/** Result schema of each point's handler. */
export const extensionResultSchemas = {
  'prompt.segment@1': z.array(ReturnedSegment),
  'prompt.history-transform@1': z.array(HistoryMessageSchema),
  'history.compact@2': CompactResult,
  'session.world-context@1': WorldContextResult,
  'memory.block-definitions@1': MemoryBlockDefinitions,
} satisfies Record<ExtensionPoint, z.ZodType>;

export const hookResultSchemas = {
  /** Either field may be left out (kept as is); nothing returned keeps both. */
  PostContextAssembly: z
    .object({ systemPrompt: z.string().optional(), messages: z.array(HookMessage).optional() })
    .strict()
    .nullish(),
  /** `messages` replaces the request's messages (the system message first); nothing returned keeps them. */
  PreLLMCall: z
    .object({ messages: z.array(RequestMessage).min(1).optional() })
    .strict()
    .nullish(),
} satisfies Record<HookName, z.ZodType>;

/** What each point's handler is given. */
export interface ExtensionInputs {
  /** Constant within an execution: a provider cannot tell which runtime asks (spec §3). */
  'prompt.segment@1': { playerInput: { text: string } };
  /** A copy of the committed history (the previous provider's result in a chain). */
  'prompt.history-transform@1': { messages: PluginHistoryMessage[] };
  'history.compact@2': CompactInput;
  'session.world-context@1': Record<string, never>;
  /** A service: the input is `{}` (`ctx.services` sends it). */
  'memory.block-definitions@1': Record<string, never>;
}

export interface ExtensionResults {
  'prompt.segment@1': ReturnedSegment[];
  'prompt.history-transform@1': PluginHistoryMessage[];
  'history.compact@2': CompactResult;
  'session.world-context@1': z.infer<(typeof extensionResultSchemas)['session.world-context@1']>;
  'memory.block-definitions@1': MemoryBlockDefinitions;
}

/** One provider's answer to `ctx.services(point)`; the host sets `providerPluginId` (a provider cannot claim another's). */
export interface ServiceResult<P extends ServicePoint> {
  readonly providerPluginId: string;
  /** The provider's extension id (`contributes.extensions[].id`). */
  readonly id: string;
  readonly result: ExtensionResults[P];
}

export interface HookPayloads {
  PostContextAssembly: {
    systemPrompt: string;
    messages: HookMessage[];
    /**
     * Read-only sources (spec §3; frozen, not accepted back): `promptTemplate`, the runtime's
     * localized body before `{{ }}` interpolation; `inputSlots`, the resolved `io.inputs` with
     * provenance; `characterSummary`, the sheet of the character the player plays (the JSON of
     * `{{ player.character }}`; '' with none).
     */
    sources: Readonly<{ promptTemplate: string; inputSlots: readonly unknown[]; characterSummary: string }>;
  };
  PreLLMCall: { model: string; messages: RequestMessage[] };
}

export type HookResults = { [H in HookName]: z.input<(typeof hookResultSchemas)[H]> };

/** Read access to the plugin's own data (spec §4); writes come with tools and function runtimes. */
export interface PluginDataReader {
  get(namespace: string, key: string): Promise<unknown>;
  list(namespace: string, options?: { limit?: number }): Promise<{ key: string; value: unknown }[]>;
}

/**
 * Read and write access to the plugin's own data, in function runtimes (tools: the next issue).
 * Writes are kept until the function returns and then stored together with its output, as
 * `plugin-data.written@1` / `plugin-data.deleted@1` events; a function that fails stores none. Reads
 * see the function's own writes. `get` of a missing key resolves to null.
 */
export interface PluginDataWriter extends PluginDataReader {
  set(namespace: string, key: string, value: unknown): Promise<void>;
  delete(namespace: string, key: string): Promise<void>;
}

/** Helpers a plugin outside the repository reaches through `api.sdk` / `ctx.sdk`. */
export interface PluginSdk {
  /** Drops UUID ids, ISO times and `sessionId` from a value before a model sees it (spec §4). */
  modelFacingJson(value: unknown): unknown;
  /** Escapes `<`, `>`, `&` for text placed inside a data block. */
  escapeXml(text: string): string;
  /** `<player-character>` / `<character-profiles>` turn segments (spec §4 "Writing that keeps the system prompt unchanged"). */
  characterSheetSegments: typeof characterSheetSegments;
  /** A story runtime's character sheets from the world: the primary seat's character, every other profile (`worldCharacterSheets(ctx.world, { locale, audience })`). */
  worldCharacterSheets: typeof worldCharacterSheets;
  /** The character played from a seat (`primarySeat(seats)` for the player's). */
  currentCharacterOf: typeof currentCharacterOf;
  /** The primary seat: the one marked `primary`, else the first. */
  primarySeat: typeof primarySeat;
  /** A loader of the plugin's own templates: `createPromptLoader(join(sdk.pluginRoot, 'prompts', 'server'))`. */
  createPromptLoader: typeof createPromptLoader;
  /** The plugin's folder (absolute; where its PLUGIN.md is); `null` in the host's shared, plugin-less copy. */
  readonly pluginRoot: string | null;
  /** A bookkeeper's roster lines, `- <id> | <name> (aka …) [player]`, by id (spec §2 "Layout for bookkeeping runtimes"). */
  rosterLines: typeof rosterLines;
  /** A readable plugin-data key for a term: NFC, lower case, whitespace as `-`, cut by code points. */
  foldKey: typeof foldKey;
  /** Compares strings by code units (a locale-independent sort). */
  byCodeUnits: typeof byCodeUnits;
  /** A text on one line, cut to at most `max` code points (on a grapheme boundary) with `…`: for a tool's one-line summary for the player. */
  clipLine: typeof clipLine;
}

/** A frozen view of the session's world. */
export type WorldView = Readonly<LoadedWorld>;

/** What every handler and hook is given besides its input. */
export interface HandlerContext {
  readonly pluginId: string;
  readonly locale: Locale;
  /**
   * `retryFromTurnId`: set while a regenerated turn runs (`POST …/turns/:turnId/retry`), the turn it
   * re-runs from the same source; a runtime that depends on that turn's artifact reads it by this id.
   * `turnId`: this execution's own turn (a regeneration, or a turn submitted again after a failure,
   * has a new one), so a plugin can key the artifacts of a turn by it; absent where no execution runs.
   * `previousTurnId`: the previous turn as the history this execution reads has it (after a
   * `select`, the chosen alternative; for a regeneration, the turn before the one it re-runs), so a
   * plugin reads the artifacts of the committed previous turn by it; absent on the first turn.
   */
  readonly session: Readonly<{ id: string; turnNumber: number; turnId?: string; previousTurnId?: string; retryFromTurnId?: string }>;
  readonly world: WorldView | null;
  readonly settings: Readonly<Record<string, unknown>>;
  readonly pluginData: PluginDataReader;
  readonly sdk: PluginSdk;
  /**
   * Every provider's result for a service point (`SERVICE_POINTS`), in plugin id order, each with the
   * provider's plugin id. The input is `{}`. Within an execution a provider runs once per input
   * (its result is recorded and reused, like any extension result); a provider of a service cannot
   * call `ctx.services` itself. A provider that throws or answers an invalid result rejects the call
   * with an error naming plugin, point and id.
   */
  services<P extends ServicePoint>(point: P): Promise<readonly ServiceResult<P>[]>;
}

/** Hooks are also told which runtime's request they see. */
export interface HookContext extends HandlerContext {
  readonly runtime: Readonly<{ pluginId: string; runtimeId: string }>;
}

/** The context each point's handler is given: the compaction provider also gets the summary model. */
export type ExtensionContext<P extends ExtensionPoint> = P extends 'history.compact@2' ? CompactionContext : HandlerContext;

export type ExtensionHandler<P extends ExtensionPoint> = (
  input: ExtensionInputs[P],
  ctx: ExtensionContext<P>,
) => ExtensionResults[P] | Promise<ExtensionResults[P]>;

export type HookFn<H extends HookName> = (payload: HookPayloads[H], ctx: HookContext) => HookResults[H] | Promise<HookResults[H]>;

/**
 * Which requests a hook is asked about. `runtimes: 'own'`: only the requests of the registering
 * plugin's own runtimes; every other runtime's request goes on as if the hook were not there (it
 * is not run, nothing is recorded for it). Default: every runtime's request.
 */
export interface HookOptions {
  runtimes?: 'own' | 'all';
}

/** What a `type: function` runtime's code is given: the handler context, its inputs, and its own data read and write. */
export type FunctionContext = Omit<HandlerContext, 'pluginData'> & {
  readonly inputs: Readonly<Record<string, unknown>>;
  readonly pluginData: PluginDataWriter;
  /**
   * Emits a domain event (a topic some loaded plugin declares in `contributes.events`; the payload
   * JSON, at most 16,000 characters): recorded with the run's output, and each runtime the topic
   * triggers then runs as its own activation. A failed run emits nothing.
   */
  emit(topic: string, payload?: unknown): void;
  /** Generated media: stored and recorded with the run's output (a failed run stores nothing referenced). */
  readonly assets: Assets;
};

/** An asset a tool or function runtime generated (PLUGIN-API.md `ctx.assets.generate`). */
export interface AssetSubmission {
  /** `image` gets a description row in the history and may be shown to image-capable story models; `audio` and `video` do not. */
  readonly modality: 'image' | 'audio' | 'video';
  /** `type/subtype` of the modality (`image/png` …). Images are sent to models only as PNG, JPEG, WebP or GIF; others are stored and shown to the player only. */
  readonly mimeType: string;
  readonly bytes: Uint8Array;
  /** What it shows: the description row states `caption`, else `prompt` (folded onto one line, at most 600 characters). */
  readonly meta?: Readonly<{ caption?: string; prompt?: string }>;
}

/**
 * Generated media (spec §1 "Images that have been shown"). A submission is kept until the tool or
 * function returns: then its bytes are stored (the deployment's MediaStore) and it is recorded with
 * the result; the turn's commit shows it to the player (and, for an image, writes its description
 * row). A run that throws or times out stores nothing that anything references.
 */
export interface Assets {
  /** Submits one asset; resolves to its media id (the client reads the bytes at `GET /v1/sessions/:id/media/:mediaId`). */
  generate(asset: AssetSubmission): Promise<{ mediaId: string }>;
}

/** A `type: function` runtime's code: its JSON-serializable result is the runtime's output (its JSON text). */
export type FunctionRuntimeFn = (ctx: FunctionContext) => unknown;

/** Where a tool's typed input came from: `resultId` is for tools and the kernel only (it never enters a prompt). */
export interface ToolInputSource {
  readonly pluginId: string;
  readonly runtimeId: string;
  readonly resultId?: string;
}

/** One typed input of the calling runtime (`io.inputs`), with its original value and provenance (spec §4). */
export interface ToolInputSlot {
  readonly binding: string;
  readonly cardinality: 'one' | 'many';
  readonly value?: unknown;
  readonly items?: readonly unknown[];
  readonly source: ToolInputSource;
  readonly sources?: readonly ToolInputSource[];
}

/** One export the calling runtime sees (`<runtime-exports>`), with its original value and provenance, `resultId` included (spec §4). */
export interface ToolRuntimeExport {
  readonly name: string;
  readonly value: unknown;
  readonly source: ToolInputSource;
}

/**
 * What a tool's code is given: the handler context, the calling runtime's input slots, its own
 * data read and write, and `emit`. Writes and emissions are kept until the tool returns and are
 * recorded with its result; a tool that throws or times out records none.
 */
export type ToolContext = Omit<HandlerContext, 'pluginData'> & {
  /** The calling runtime's typed inputs, with original values and `resultId` (spec §4). */
  readonly inputSlots: readonly ToolInputSlot[];
  /** The exports the calling runtime sees (`io.exports` of other runtimes), with original values and `resultId` (spec §4). */
  readonly exports: readonly ToolRuntimeExport[];
  readonly pluginData: PluginDataWriter;
  /** The runtime that called the tool. */
  readonly runtime: Readonly<{ pluginId: string; runtimeId: string }>;
  /** Emits a domain event (a declared topic; its payload must match the declared payload schema). */
  emit(topic: string, payload?: unknown): void;
  /** Generated media: stored and recorded with the tool's result (a tool that fails stores nothing referenced). */
  readonly assets: Assets;
  /**
   * Pauses the calling runtime on this call: `return ctx.suspend({ waitingFor })`. The execution
   * records its continuation and waits (`status: "waiting"`, with `waitingFor`) until
   * `POST /v1/executions/:id/resume { payload }`; the payload is then this call's result (what the
   * model reads: `{ "ok": true, "data": payload }`), on any worker, with the same input slots and
   * the same protected current turn as before the pause. Only the value it returns suspends, and
   * only when the tool returns it; the tool's writes and emissions are kept.
   */
  suspend(request: { waitingFor: WaitingFor }): ToolSuspension;
};

/** What a suspended runtime waits for: the player's approval, or a form (`schema`: a JSON Schema of the payload). */
export interface WaitingFor {
  readonly kind: 'approval' | 'form';
  /** Shown to the player, in the session's language. */
  readonly prompt: string;
  readonly schema?: Readonly<Record<string, unknown>>;
}

/** The result `ctx.suspend` makes; a tool returns it to suspend its runtime (any other value is a normal result). */
export interface ToolSuspension {
  readonly kind: 'suspend';
  readonly waitingFor: WaitingFor;
}

/** A tool's code (`api.registerTool(name, fn)`): `args` match the tool's `parameters`; its JSON-serializable result goes back to the model. */
export type ToolFn = (args: Record<string, unknown>, ctx: ToolContext) => unknown;

export interface PluginApi {
  /** The id of the plugin being registered. */
  readonly pluginId: string;
  readonly sdk: PluginSdk;
  provideExtension<P extends ExtensionPoint>(point: P, id: string, provider: { handler: ExtensionHandler<P> }): void;
  hook<H extends HookName>(name: H, fn: HookFn<H>, options?: HookOptions): void;
  runFunction(runtimeId: string, fn: FunctionRuntimeFn): void;
  registerTool(name: string, fn: ToolFn): void;
}

/** What a server entry exports. */
export type RegisterFn = (api: PluginApi) => void;
