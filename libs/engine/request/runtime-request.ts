import { createHash } from 'node:crypto';
import {
  type Activation,
  type ActivatedLoreEntry,
  buildContext,
  currentCharacterSummary,
  type AssembledContext,
  type BuildContextParams,
  type ContextMessage,
  type EventCatalogEntry,
  type ExecutionOutput,
  type ExtensionSegment,
  type HistoryMessage,
  type HistorySummary,
  historyBoundary,
  type InputSlot,
  type RuntimeExport,
  type RuntimeView,
  type SelfDataBlock,
  applyBudget,
  type BudgetLedger,
  type BudgetMessageKind,
  type BudgetMode,
  type BudgetStats,
  type LedgerEntry,
  estimateFixed,
  withPostContextAssembly,
} from '../../context';
import type { AgentConfig, LoadedWorld, Locale } from '../../plugins-sdk';
import { BoundedMemo } from '../../memo';
import { FunctionRuntimeHasNoModelCallError } from '../errors';
import { worldLorebook } from '../catalog/world-catalog';
import {
  callOutputLimit,
  type ChatMessage,
  layerOverrides,
  type ModelCall,
  type ProviderAdapter,
  type ProviderRegistry,
  type RequestOverrides,
  type SlotConfig,
  type ToolDefinition,
} from '../../providers';
import {
  addedEntries,
  type BudgetCheckPoint,
  carrySections,
  ContextOverflowError,
  contextKinds,
  hookedKinds,
  sentSections,
  rememberingEstimator,
  slotEstimator,
  slotLimits,
  trimmedAssembly,
} from '../budget';
import type { CatalogRuntime } from '../catalog/runtime-catalog';
import { dynamicSegments, postContextHooks, preLlmCall, type RequestPlugins, transformHistory } from '../plugin-host/request-extensions';
import type { PluginSettings } from '../plugin-host/plugin-settings';
import { renderRuntimeBody } from './runtime-template';
import { extendedWorld } from '../plugin-host/world-context';
import type { MediaStore } from '../../events';
import { attachImages, type ImageReference, readRecentImages } from '../history/picture-attachments';
import { playerOverrides, type SessionPreferences } from '../preferences';
import type { AssemblyReuse } from './assembly-reuse';
import { activeLore } from './lore-activation';

/** Everything a runtime's request is built from; each field can be derived from the event log. */
export interface RuntimeRequestInputs {
  sessionId: string;
  /**
   * The session whose `prompt_cache_key` the request sends (`promptCacheKey`): a branch's root
   * (`SessionSettings.rootSessionId`), so the provider's cache that holds the prefix the branch
   * shares with its parent is reused. Default `sessionId`.
   */
  cacheSessionId?: string;
  locale: Locale;
  /** How [LANGUAGE] names the session's language (`session.created@1` `languageName`); none: a session recorded before names were. */
  languageName?: string;
  runtime: CatalogRuntime;
  stageIndex: number | null;
  /** Committed messages of earlier turns: the shared history view (every uncompacted message). */
  history: readonly HistoryMessage[];
  /** `{{ session.turnNumber }}`: committed turns + 1, compacted ones counted (default: counted from `history`). */
  turnNumber?: number;
  summaries: readonly HistorySummary[];
  playerInput: { messageId: string; text: string };
  /** Messages the player added to this turn while it ran (spec §1: part of the protected current turn), in arrival order. */
  midTurnMessages?: readonly { messageId: string; text: string }[];
  /** Outputs this execution produced before the call. */
  outputs: readonly ExecutionOutput[];
  segments: readonly ExtensionSegment[];
  /** The session's world (its lorebook), if it has one. */
  world: LoadedWorld | null;
  /** The last committed messages, compacted ones included (lorebook scan range). */
  scanTail: readonly { text: string }[];
  /** The runtime's `io.selfData` blocks (the worker reads the store, a rebuild folds the events). */
  selfData?: readonly SelfDataBlock[];
  /** Typed inputs resolved from `io.inputs` (`executionRequestInputs`); none by default. */
  inputs?: readonly InputSlot[];
  /** Other runtimes' `io.exports` that reach this one (`resolveRuntimeExports`): `<runtime-exports>`; none by default. */
  exports?: readonly RuntimeExport[];
  /** A runtime resumed after a suspension: the protected range saved with its continuation (`executionRequestInputs`). */
  resume?: { currentTurnUserMessages: readonly ContextMessage[] };
  /** An event or manual activation (`<runtime-activation>`); default: the runtime's stage, if any. */
  activation?: Activation;
  /** The player's configuration of each plugin (`{{ userSettings.* }}`), from `session.created@1`. */
  pluginSettings?: PluginSettings;
  /**
   * The player's preferences per slot as the execution reads them (`preferencesBefore` its input):
   * over `llm.toml`'s settings of the runtime's slot, both over its `agent` preferences (spec §3). None: nothing set.
   */
  preferences?: SessionPreferences;
  /** `{{ player.lastFormValues }}`: the latest input's form values (seam: the typed-inputs part fills it; `{}` until then). */
  lastFormValues?: unknown;
  /** `<available-events>`: the event catalogue of a runtime with `agent.advertiseEvents` (`advertisedEvents`, libs/engine/tools); none by default. */
  eventCatalog?: readonly EventCatalogEntry[];
  /** A later step of the agent loop: the messages its earlier steps added, and the runtime's tool definitions (libs/engine/agent). */
  loop?: AgentStepInputs;
  /** The step's non-streaming fallback call (`llm.calling@1` fallback): the same request without streaming. */
  fallback?: 'non-streaming';
  /** The images of the uncompacted history (`recentImageReferences`): a story runtime's recent-images message, if its model accepts images. */
  recentImages?: readonly ImageReference[];
  /** Where their bytes are read (the worker's MediaStore; a rebuild reads the same store again). None: no image is attached. */
  media?: { store: MediaStore; tenantId: string };
  /**
   * The token budget (spec §5): the run's ledger so far and the request's mode. Absent: no budget
   * (the compaction barrier's estimate, a rebuild of a call recorded before the budget).
   */
  budget?: { ledger: BudgetLedger; mode: BudgetMode };
}

/** What the budget did to a request (`llm.calling@1` budget): the ledger entries it added and its stats. */
export interface RequestBudget {
  mode: BudgetMode;
  added: LedgerEntry[];
  stats: BudgetStats;
}

/** What an agent loop step adds to its runtime's request. */
export interface AgentStepInputs {
  /** Appended after the runtime's messages (before the PreLLMCall hooks): earlier steps' replies, tool results, nudges, retry hints. */
  conversation: readonly ChatMessage[];
  /** Sent with every step (none: no `tools` field). */
  tools: readonly ToolDefinition[];
  /**
   * Tools off (a finalizer step, an emergency rescue): the same definitions go with
   * `tool_choice: none`, so the model cannot call one while the provider's cached prefix (tools
   * come first) and the earlier tool calls in the conversation stay valid on every protocol.
   */
  toolsOff?: boolean;
}

export interface RuntimeRequest {
  context: AssembledContext;
  /** Lorebook entries that fired for this request, with why. */
  lorebook: ActivatedLoreEntry[];
  body: Record<string, unknown>;
  slot: SlotConfig;
  adapter: ProviderAdapter;
  /** Every segment offered to the assembly: the static ones, then the dynamic ones (providerPluginId set by the host). */
  segments: readonly ExtensionSegment[];
  /** The provider-neutral messages the body was built from (after the PreLLMCall hooks). */
  messages: ChatMessage[];
  /** The call the body was built from (`adapter.buildRequest(call)`): a fallback rebuilds it without streaming. */
  call: ModelCall;
  /** What the budget did (with `inputs.budget`). */
  budget?: RequestBudget;
  /** For prefix reports (`llm.calling@1` layout): the system sections and the section of each message as sent. */
  layout: ReturnType<typeof requestLayout>;
}

/** How a runtime's request is built (`buildRuntimeRequest`, `buildRuntimeCall`). */
export interface RequestBuildOptions {
  /** The worker's assemblies of earlier builds (`workerAssemblies`): one built from the same params is given again. None: built (a rebuild). */
  assemblies?: AssemblyReuse;
}

/**
 * Assembles the context and the exact wire body of one runtime's model call. With `plugins`, the
 * plugins' code takes part (spec §1 steps 2 and 6, §3): history transforms, dynamic segments,
 * PostContextAssembly and PreLLMCall hooks, each result obtained through the plugins' resolver
 * (the worker's runs handlers once per execution and input; a rebuild's reads recorded results).
 */
export async function buildRuntimeRequest(
  inputs: RuntimeRequestInputs,
  providers: ProviderRegistry,
  plugins?: RequestPlugins,
  options: RequestBuildOptions = {},
): Promise<RuntimeRequest> {
  const request = await buildRuntimeCall(inputs, providers, plugins, options);
  return { ...request, body: request.adapter.buildRequest(request.call) };
}

/**
 * `buildRuntimeRequest` without the wire body (`adapter.buildRequest`): what an estimate of the
 * request reads (the compaction barrier's: the call's messages and tools), the same handlers run.
 */
export async function buildRuntimeCall(
  inputs: RuntimeRequestInputs,
  providers: ProviderRegistry,
  plugins?: RequestPlugins,
  options: RequestBuildOptions = {},
): Promise<Omit<RuntimeRequest, 'body'>> {
  const m = inputs.runtime.manifest;
  const agent = agentOf(inputs.runtime);
  // the same world, tail and text as a sibling runtime's (or the barrier's estimate): activated once
  const lorebook = inputs.world
    ? [
        ...activeLore(worldLorebook(inputs.world, { story: m.outputKind === 'story' }), {
          playerInput: inputs.playerInput.text,
          committedTail: inputs.scanTail,
        }),
      ]
    : [];
  const history = plugins ? await transformHistory(plugins, inputs.history) : inputs.history;
  const segments = plugins ? [...inputs.segments, ...(await dynamicSegments(plugins, inputs.playerInput))] : inputs.segments;
  // the world as the body's template sees it: extended by session.world-context@1 providers (spec §3)
  const world = plugins ? await extendedWorld(plugins, inputs.world) : inputs.world;
  const ids = { pluginId: inputs.runtime.pluginId, runtimeId: inputs.runtime.runtimeId };
  const { slot, adapter, capabilities, overrides: configured } = providers.forSlot(agent.slot);
  // spec §1: recently shown images, for a story runtime whose model accepts images (by capability, not name)
  const shown =
    m.outputKind === 'story' && capabilities.imageInput && inputs.media && (inputs.recentImages ?? []).length > 0
      ? await readRecentImages(inputs.recentImages!, inputs.media.store, { tenantId: inputs.media.tenantId, sessionId: inputs.sessionId })
      : null;
  const template = inputs.runtime.bodies[inputs.locale];
  // what only PostContextAssembly hooks read (their sources, the trimmed assembly) is built only when
  // some are asked about this runtime's request (a hook of another plugin's runtimes only is not)
  const withHooks = (plugins?.registry.hooksOf('PostContextAssembly', ids).length ?? 0) > 0;
  const params: BuildContextParams = {
    locale: inputs.locale,
    ...(inputs.languageName === undefined ? {} : { languageName: inputs.languageName }),
    runtime: {
      ...runtimeView(inputs.runtime, inputs.stageIndex),
      body: renderRuntimeBody({ ...inputs, world, body: template, plugin: inputs.runtime.plugin }),
    },
    // spec §3: what PostContextAssembly hooks read, read-only: the body unrendered, the played character
    ...(withHooks ? { promptTemplate: template, characterSummary: currentCharacterSummary(world) } : {}),
    activation: inputs.activation ?? (inputs.runtime.stage !== null ? { kind: 'stage', stage: inputs.runtime.stage } : undefined),
    ...(inputs.inputs && inputs.inputs.length > 0 ? { inputs: inputs.inputs } : {}),
    ...(inputs.exports && inputs.exports.length > 0 ? { exports: inputs.exports } : {}),
    history,
    summaries: inputs.summaries,
    playerInput: inputs.playerInput,
    ...(inputs.resume ? { resume: inputs.resume } : {}),
    ...(inputs.midTurnMessages && inputs.midTurnMessages.length > 0 ? { midTurnMessages: inputs.midTurnMessages.map((m) => ({ text: m.text })) } : {}),
    executionOutputs: inputs.outputs,
    segments,
    lorebook,
    selfData: inputs.selfData ?? [],
    ...(inputs.eventCatalog && inputs.eventCatalog.length > 0 ? { eventCatalog: inputs.eventCatalog } : {}),
    ...(shown && shown.images.length > 0 ? { recentImages: shown.images } : {}),
  };
  const tools = inputs.loop && inputs.loop.tools.length > 0 ? [...inputs.loop.tools] : undefined;
  // spec §5: checked when the context is assembled, after PostContextAssembly (the hooks get the
  // trimmed assembly), then on the actual request after PreLLMCall; without hooks the first two are one
  const budget = inputs.budget ? await requestBudget({ ...inputs.budget, locale: inputs.locale }, slot, { tools, responseSchema: m.output.schema }) : undefined;
  // an assembly no hook is given is reused from an earlier build of the same params (the barrier's estimate, an earlier step)
  const bare =
    options.assemblies && !withHooks
      ? await options.assemblies.assemble(`${inputs.sessionId}/${ids.pluginId}/${ids.runtimeId}`, params)
      : await buildContext(params);
  const bareMessages = requestMessages(bare);
  const atAssembly = budget?.check(bareMessages, contextKinds(bare), budget.start, 'assembly');
  const hookParams = withHooks && atAssembly ? { ...params, trimmedAssembly: trimmedAssembly(bare, bareMessages, atAssembly) } : params;
  // the hooks run on the assembly made once: buildContext with hooks is `bare` with them applied
  const hooks = plugins && withHooks ? await postContextHooks(plugins, hookParams, bare, ids) : [];
  const context = hooks.length > 0 ? withPostContextAssembly(bare, { ...hookParams, postContextAssembly: hooks }) : bare;
  const assembled = hooks.length > 0 ? requestMessages(context) : bareMessages;
  const first = hooks.length > 0 ? budget?.check(assembled, contextKinds(context), atAssembly!.ledger, 'post-context-assembly') : atAssembly;
  const conversation = inputs.loop?.conversation ?? [];
  const own = [...(first?.messages ?? assembled), ...conversation];
  const ownKinds: BudgetMessageKind[] = [...(first?.kinds ?? contextKinds(context)), ...conversation.map((): BudgetMessageKind => 'loop')];
  const hooked = plugins ? await preLlmCall(plugins, ids, slot.model, own) : own;
  // the bytes go on after the PreLLMCall hooks (they see text only)
  const attached = shown ? attachImages(hooked, context, shown.inline) : hooked;
  const second = budget?.check(attached, hookedKinds(own, ownKinds, hooked), first!.ledger, 'request');
  const messages = second?.messages ?? attached;
  // the section of each message as sent: carried through the budget's checks by identity; hooks and images keep positions
  const assembledSections = carrySections(assembled, ['system', ...context.messageSections], first);
  const attachedSections = attached.map((_, i) => assembledSections[i] ?? null);
  const layout = requestLayout(context, sentSections(carrySections(attached, attachedSections, second)));
  const call: ModelCall = {
    model: slot.model,
    messages,
    ...(tools ? { tools } : {}),
    ...(m.output.schema ? { outputSchema: { name: inputs.runtime.runtimeId, schema: m.output.schema } } : {}),
    // the response reserve caps the output of every call
    maxOutputTokens: callOutputLimit(slot),
    stream: streams(inputs.runtime) && inputs.fallback === undefined,
    preferences: { ...(agent.reasoning === false ? { reasoning: false as const } : {}), ...(agent.toolChoice ? { toolChoice: agent.toolChoice } : {}) },
    ...requestOverrides({
      toolsOff: Boolean(tools && inputs.loop?.toolsOff),
      player: inputs.preferences && playerOverrides(inputs.preferences, agent.slot),
      configured,
    }),
    cacheKey: promptCacheKey(inputs.cacheSessionId ?? inputs.sessionId, inputs.runtime.pluginId, inputs.runtime.runtimeId),
    cacheBoundaries: slot.cacheBoundaries,
  };
  const recorded =
    budget && first && second
      ? {
          mode: budget.mode,
          added: addedEntries(budget.start, second.ledger),
          stats: allChecks((hooks.length > 0 ? [atAssembly!, first, second] : [first, second]).map((c) => c.stats)),
        }
      : undefined;
  return { context, lorebook, slot, adapter, segments, messages, call, layout, ...(recorded ? { budget: recorded } : {}) };
}

/**
 * The explicit settings of a runtime's request (spec §3 "the player's slot parameter overrides and
 * the preset's provider metadata take priority"), field by field: tools off (a finalizer or
 * emergency step: `tool_choice: none`) over the player's preferences for the slot, over what
 * `llm.toml` sets on it (the slot's own, then its preset's). The runtime's `agent` preferences
 * (`ModelCall.preferences`) apply where none of them is set; the adapters decide the rest.
 */
function requestOverrides(given: { toolsOff: boolean; player: RequestOverrides | undefined; configured: RequestOverrides }): Pick<ModelCall, 'overrides'> {
  const overrides = layerOverrides(given.toolsOff ? { toolChoice: 'none' } : undefined, given.player, given.configured);
  return Object.keys(overrides).length > 0 ? { overrides } : {};
}

/**
 * The stats of a request's checks (in order) as one: `before` is the request as built (what the
 * earlier checks removed added back to what the last saw), `after` what was sent, the counts summed.
 */
function allChecks(checks: readonly BudgetStats[]): BudgetStats {
  const last = checks[checks.length - 1];
  const sum = (count: (s: BudgetStats) => number) => checks.reduce((n, s) => n + count(s), 0);
  return {
    inputLimit: last.inputLimit,
    before: last.before + sum((s) => (s === last ? 0 : s.before - s.after)),
    after: last.after,
    elided: sum((s) => s.elided),
    collapsed: sum((s) => s.collapsed),
    pruned: sum((s) => s.pruned),
    truncated: sum((s) => s.truncated),
  };
}

/**
 * The budget checks of one request (spec §5 "Budget", §1 step 6). `libs/context`'s buildContext
 * takes no budget, so the checks run here: on what it assembled (the system prompt, the history,
 * the summary envelope and the protected current turn), whose result the PostContextAssembly hooks
 * are given; on the context the hooks returned (when there are hooks); and on the actual request
 * after the PreLLMCall hooks and the recent images: the loop's conversation (tool calls, tool
 * results, nudges, retry hints) and whatever a hook added. Each counts the tool definitions and the
 * response schema (twice). An overflow at any stops the call before anything is sent.
 */
async function requestBudget(
  given: { ledger: BudgetLedger; mode: BudgetMode; locale: Locale },
  slot: SlotConfig,
  sent: { tools: ToolDefinition[] | undefined; responseSchema: Record<string, unknown> | undefined },
) {
  // the checks read the same texts (and the same tools and schema) again: each is counted once
  const estimator = rememberingEstimator(await slotEstimator(slot));
  const limits = slotLimits(slot);
  const fixedTokens = estimateFixed({ tools: sent.tools, responseSchema: sent.responseSchema }, estimator);
  return {
    mode: given.mode,
    start: given.ledger,
    check(messages: readonly ChatMessage[], kinds: readonly BudgetMessageKind[], ledger: BudgetLedger, at: BudgetCheckPoint) {
      const outcome = applyBudget({
        messages,
        kinds,
        ...(sent.tools ? { tools: sent.tools } : {}),
        ...(sent.responseSchema ? { responseSchema: sent.responseSchema } : {}),
        fixedTokens,
        limits,
        estimator,
        ledger,
        locale: given.locale,
        mode: given.mode,
      });
      if (outcome.kind === 'overflow') throw new ContextOverflowError(outcome.text, outcome.stats, at);
      return outcome;
    },
  };
}

/**
 * Story runtimes stream their text; the others answer in one piece. A streamed step whose call
 * fails where one without streaming may not is sent once more without it (libs/engine/agent/step.ts).
 */
export function streams(runtime: CatalogRuntime): boolean {
  return runtime.manifest.outputKind === 'story';
}

/** The agent settings of a runtime that calls a model; a function runtime has none. */
export function agentOf(runtime: CatalogRuntime): AgentConfig {
  if (runtime.manifest.agent === null) throw new FunctionRuntimeHasNoModelCallError(runtime.pluginId, runtime.runtimeId);
  return runtime.manifest.agent;
}

/** What buildContext sees of a runtime (its body left empty: the caller adds the localized one). */
export function runtimeView(runtime: CatalogRuntime, stageIndex: number | null): RuntimeView {
  const m = runtime.manifest;
  return {
    pluginId: runtime.pluginId,
    runtimeId: runtime.runtimeId,
    outputKind: m.outputKind,
    contract: m.output.contract,
    body: '',
    history: m.agent?.history ?? {},
    ...(m.output.schema ? { hasOutputSchema: true, outputSchema: m.output.schema } : {}),
    stageIndex,
  };
}

/**
 * The provider-neutral messages of a runtime's request: the system prompt, then the conversation,
 * with the last message of the history marked for the history cache boundary (spec §5).
 */
export function requestMessages(context: AssembledContext): ChatMessage[] {
  const historyEnd = historyBoundary(context);
  return [
    { role: 'system', content: context.systemPrompt },
    ...context.messages.map((msg, i): ChatMessage => ({ role: msg.role, content: msg.content, ...(i === historyEnd ? { endsHistory: true } : {}) })),
  ];
}

/** The request's layout for prefix reports: system section lengths as serialized, message sections (of the assembled context, or `messageSections`). */
export function requestLayout(context: AssembledContext, messageSections: readonly string[] = ['system', ...context.messageSections]) {
  return {
    systemSections: context.systemSections.map((s) => ({ name: s.name, length: s.text.length })),
    messageSections: [...messageSections],
  };
}

/**
 * prompt_cache_key: one per session and runtime, so their requests route to the same cache. A
 * branch sends its root session's (`RuntimeRequestInputs.cacheSessionId`): its requests start with
 * the prefix its parent's requests cached.
 */
export function promptCacheKey(sessionId: string, pluginId: string, runtimeId: string): string {
  const named = `${sessionId}/${pluginId}/${runtimeId}`;
  let key = cacheKeys.get(named);
  if (key === undefined) {
    key = `covel-${createHash('sha256').update(named).digest('hex').slice(0, 32)}`;
    cacheKeys.set(named, key);
  }
  return key;
}

/**
 * `promptCacheKey`'s answers for the latest sessions and runtimes (the oldest one goes past the
 * bound): every request of a session's runtime sends the same key, and a worker builds each
 * turn's requests more than once (the compaction barrier's estimate, then each step); a SHA-256
 * each time was ~0.3 % of a worker's CPU per narrator turn (issue 33).
 */
const CACHE_KEYS_KEPT = 1_024;
const cacheKeys = new BoundedMemo<string, string>({ maxEntries: CACHE_KEYS_KEPT });
