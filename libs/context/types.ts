import type { Locale } from '../plugins-sdk';

/** A committed message of the session as the history store returns it (turn_messages row). */
export interface HistoryMessage {
  messageId: string;
  turnId: string;
  role: 'user' | 'assistant' | 'system';
  sourceType: 'player' | 'runtime' | 'system';
  pluginId: string | null;
  runtimeId: string | null;
  outputKind: 'story' | 'structured' | 'none' | null;
  text: string;
}

/** A saved history summary (spec §1 "History compaction"). */
export interface HistorySummary {
  id: string;
  content: string;
  /** Covered messages, when the caller read them (assembly needs only the content). */
  messageIds?: readonly string[];
}

export type Audience = 'self' | 'story' | { contract: string };
export type SegmentPosition = 'system' | 'pre-history' | 'post-history' | { depth: number };
export type Volatility = 'stable' | 'session' | 'turn';

/** An extension segment (static `contributes.prompt` or returned by `prompt.segment@1`). */
export interface ExtensionSegment {
  id: string;
  /** Added by the host; a plugin cannot set it. */
  providerPluginId: string;
  content: string;
  position: SegmentPosition;
  volatility: Volatility;
  role: 'system' | 'user' | 'assistant';
  /** Undefined: every runtime. */
  audience?: Audience;
  order: number;
}

/** A lorebook entry that fired this turn, with where its text goes. */
export interface ActivatedLoreEntry {
  id: string;
  content: string;
  position: 'before-plugin' | 'after-plugin' | { depth: number };
  order: number;
  /** Why it fired (for audit): a constant entry, or the keyword and where it matched. */
  reason: { kind: 'constant' } | { kind: 'keyword'; keyword: string; matchedIn: 'player-input' | 'history' };
}

export interface RuntimeView {
  pluginId: string;
  runtimeId: string;
  outputKind: 'story' | 'structured' | 'none';
  /** Output contract, e.g. `narrative-engine@2` (audience `{ contract }`). */
  contract?: string;
  /** The localized body of the runtime (its instructions). */
  body: string;
  history: { maxTurns?: number; includeSummaries?: boolean };
  /** A runtime with an output schema ends with JSON or a completion tool ([COMPLETION]). */
  hasOutputSchema?: boolean;
  /** The output schema itself: written into [COMPLETION] as `<output-schema>` (the bridge; Responses and Gemini also send it natively). */
  outputSchema?: Readonly<Record<string, unknown>>;
  /** Index of this runtime's stage in the turn; null: no stage (runs after all stages). */
  stageIndex: number | null;
}

export type Activation = { kind: 'stage'; stage: string } | { kind: 'event'; topic: string; payload: unknown } | { kind: 'manual'; payload: unknown };

/** Where an input's value came from: the prompt shows pluginId and runtimeId; resultId stays with tools and the kernel. */
export interface InputSource {
  pluginId: string;
  runtimeId: string;
  resultId?: string;
}

/** A typed input slot resolved from `io.inputs`. */
export interface InputSlot {
  binding: string;
  cardinality: 'one' | 'many';
  value?: unknown;
  items?: unknown[];
  source: InputSource;
  /** `many` read from several results (a contract binding): each result's provenance, in order (the prompt shows `sources`). */
  sources?: readonly InputSource[];
}

/** One `io.exports` entry of another runtime's latest result (`<runtime-exports>`): the prompt shows pluginId and runtimeId; resultId stays with tools and the kernel. */
export interface RuntimeExport {
  name: string;
  value: unknown;
  source: InputSource;
}

/** The bounded projection of this plugin's data the store returned for `io.selfData`. */
export interface SelfDataBlock {
  namespace: string;
  rows: readonly { key: string; value: unknown }[];
  /** Rows in the namespace (the truncation note states it when rows were left out). */
  totalRows: number;
}

/** Output of a runtime of this execution (execution journal). */
export interface ExecutionOutput {
  pluginId: string;
  runtimeId: string;
  outputKind: 'story' | 'structured' | 'none';
  stageIndex: number | null;
  text: string;
}

export interface EventCatalogEntry {
  topic: string;
  description: string;
  requiredFields: readonly string[];
  /** The complete payload schema (JSON text), where references force the tool definition to show a plain object (spec §6). */
  payloadSchema?: string;
  /** The payload schema cannot be read: only the unavailable marker is shown. */
  schemaUnavailable?: boolean;
}

/** An image of the recent-images message: its media id and what it contains ('' when its description has no content). */
export interface RecentImage {
  mediaId: string;
  description: string;
}

export interface ContextMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
  /** Images carried by the recent-images message (bytes are attached by the provider layer). */
  images?: RecentImage[];
}

/** A hook run after assembly (`PostContextAssembly`); may rewrite systemPrompt and messages. */
export type PostContextAssemblyHook = (payload: PostContextAssemblyPayload) => unknown;

/**
 * What a `PostContextAssembly` hook is given to read and never to replace (spec §3): the runtime's
 * raw localized body before `{{ }}` interpolation, the resolved input slots, and the character
 * summary. Frozen copies; anything a hook returns for them is ignored.
 */
export type HookSources = Readonly<{ promptTemplate: string; inputSlots: readonly Readonly<InputSlot>[]; characterSummary: string }>;

export interface PostContextAssemblyPayload {
  systemPrompt: string;
  messages: ContextMessage[];
  /** Read-only sources: frozen, and not accepted back as replacements. */
  sources: HookSources;
}

export interface BuildContextParams {
  locale: Locale;
  /**
   * How [LANGUAGE] names the session's language, in the instruction language (`Brazilian
   * Portuguese (pt-BR)`): the name the session recorded at creation. None: English, or Simplified
   * Chinese for a zh-Hans locale (sessions recorded before names were).
   */
  languageName?: string;
  runtime: RuntimeView;
  /** Committed, uncompacted history in order (the caller reads a bounded window). */
  history: readonly HistoryMessage[];
  summaries?: readonly HistorySummary[];
  playerInput: { messageId: string; text: string };
  /** Messages the player added in the middle of this turn (part of the current turn). */
  midTurnMessages?: readonly { text: string }[];
  executionOutputs?: readonly ExecutionOutput[];
  segments?: readonly ExtensionSegment[];
  lorebook?: readonly ActivatedLoreEntry[];
  eventCatalog?: readonly EventCatalogEntry[];
  activation?: Activation;
  inputs?: readonly InputSlot[];
  exports?: readonly RuntimeExport[];
  /**
   * The runtime's `io.selfData` blocks: the plugin data of its compiled `input.inject` (spec §1),
   * the only injected blocks of the turn context (spec §2; see README "Injected blocks").
   */
  selfData?: readonly SelfDataBlock[];
  /**
   * Recently shown images, for story runtimes, oldest first (at most two are used): only those the
   * caller will attach — read from the MediaStore, checked, for a model that accepts images — so the
   * message's text and its images agree. None (a text-only model): no message.
   */
  recentImages?: readonly RecentImage[];
  /**
   * The runtime's localized body as its author wrote it, before `{{ }}` interpolation (hooks'
   * `sources.promptTemplate`); `runtime.body` is the rendered one. Default: `runtime.body` (a
   * caller that renders no template).
   */
  promptTemplate?: string;
  /** The sheet of the character the player plays (`currentCharacterSummary`; hooks' `sources.characterSummary`); default ''. */
  characterSummary?: string;
  postContextAssembly?: readonly PostContextAssemblyHook[];
  /**
   * The assembly's messages as the caller's budget check at assembly left them (spec §5: "Budget
   * checks happen in three places: when the context is assembled, after PostContextAssembly, and
   * on the actual request after each PreLLMCall"): the PostContextAssembly hooks start from these
   * instead of the messages as assembled, each with its section. The caller derives them from
   * this assembly without hooks; the system prompt is never trimmed. Without hooks it is not read.
   */
  trimmedAssembly?: { messages: readonly ContextMessage[]; messageSections: readonly MessageSectionName[] };
  /** A paused runtime resuming: its saved protected range. */
  resume?: { currentTurnUserMessages: readonly ContextMessage[] };
}

/** Names of the sections of the request, in spec §2 order. */
export type SystemSectionName = 'preamble' | 'runtime-body' | 'segments' | 'worldinfo-before' | 'events-activation' | 'worldinfo-after' | 'turn-segments';

export type MessageSectionName =
  | 'pre-history'
  | 'summary'
  | 'history'
  | 'turn-context'
  | 'recent-images'
  | 'player-input'
  | 'story-text'
  | 'ending-hint'
  | 'mid-turn'
  | 'depth'
  | 'post-history';

export interface SystemSection {
  name: SystemSectionName;
  text: string;
}

export interface AssembledContext {
  /** Serialized with cache-boundary sentinels (adapters turn them into breakpoints or strip them). */
  systemPrompt: string;
  systemSections: SystemSection[];
  messages: ContextMessage[];
  /** Section of each message, parallel to `messages` (for audit and prefix reports). */
  messageSections: MessageSectionName[];
  /** This turn's data blocks ('' when none): the content of the turn-context message, after PostContextAssembly. */
  turnContext: string;
  /** The current turn, kept together by trimming: [start, end) in `messages` (after PostContextAssembly). */
  protectedRange: { start: number; end: number };
  /**
   * Indexes in `messages` that ordinary history trimming keeps (spec §5 "Protected content"): the
   * protected range and the summary envelope, ascending.
   */
  protectedIndexes: number[];
  /** Saved with a paused runtime's continuation. */
  continuation: { currentTurnUserMessages: ContextMessage[] };
}
