import type { EventData, MediaStore, StoredEvent } from '../../events';
import { summaryCall } from '../barrier/summary-model';
import { type LoadedWorld, type Locale, promptLocaleOf } from '../../plugins-sdk';
import { LORE_SCAN_LIMIT } from '../history/history-loader';
import type { WorldLoader } from '../catalog/world-catalog';
import { redactImageData, type ProviderRegistry } from '../../providers';
import { type ActivatedLoreEntry, type AssembledContext, placeSegments } from '../../context';
import { RecordedCallWithoutExecutionError, RuntimeNotInCatalogError } from '../errors';
import type { HistoryFold } from '../history/history-fold';
import { StoryFolds } from '../history/story-folds';
import { executionOutputs, SessionJournal } from '../journal/journal';
import type { RuntimeCatalog } from '../catalog/runtime-catalog';
import { type CatalogGenerations, executionCatalog } from '../catalog/catalog-generations';
import { buildRuntimeRequest, type RuntimeRequest, type RuntimeRequestInputs, runtimeView } from '../request/runtime-request';
import { advertisedEvents } from '../tools/event-catalog';
import { staticSegments } from '../catalog/static-segments';
import { RecordedResolver } from '../plugin-host/resolver';
import { foldedSelfData, selfDataSources } from '../request/self-data';
import { executionRequestInputs, resolveRuntimeExports } from '../inputs';
import type { PluginSettings } from '../plugin-host/plugin-settings';
import { NO_PREFERENCES, type SessionPreferences } from '../preferences';
import { loopStepBudget, loopStepInputs } from '../agent/rebuild-step';
import type { ToolSet } from '../tools';

export interface RebuiltCall {
  callId: string;
  executionId: string;
  turnId: string;
  pluginId: string;
  runtimeId: string;
  recorded: string;
  rebuilt: string;
  identical: boolean;
  /** Where each section of the rebuilt request came from. */
  sources: SectionSource[];
  /** A `history.compact@2` provider's summary call (its `runtimeId` is the point); absent: a runtime's call. */
  purpose?: 'compaction-summary';
}

export interface SectionSource {
  section: string;
  source: string;
  items?: string[];
}

/**
 * Re-derives every recorded model request of a session from its events alone (the same inputs
 * the worker had: committed turns before the call, this execution's outputs so far) and compares
 * it with the bytes recorded in `llm.calling`.
 */
export async function rebuildRequests(
  events: readonly StoredEvent[],
  current: RuntimeCatalog,
  providers: ProviderRegistry,
  worlds: WorldLoader,
  options: {
    historyReadLimit: number;
    /** The earlier plugin catalogs, for executions that captured one (default: only `catalog`). */
    generations?: CatalogGenerations;
    /** The tools of agent runtimes, as the worker had them (default: none). */
    tools?: ToolSet;
    /** Where the recent images' bytes are read again (the deployment's MediaStore); none: no image is attached. */
    media?: MediaStore;
    /** Sees each rebuilt call with the request it was rebuilt from (the contract-test harness reads its sections). */
    inspect?: (call: RebuiltCall, request: RuntimeRequest & { inputs: RuntimeRequestInputs }) => void;
    /** A branch's read of its parent (`EventStore.inheritedStory`), folded before its own events; none for other sessions. */
    inherited?: readonly StoredEvent[];
    /**
     * Only the calls of this turn (an audit's): the others are not re-derived (every event is still
     * folded in order, and each call still finds its execution and runtime). No call looks at a
     * later one, so this turn's come out as they do among all of them.
     */
    turnId?: string;
  },
): Promise<RebuiltCall[]> {
  const journal = new SessionJournal();
  // the story as the worker read it: history and plugin data of the events that count (issue 30)
  const story = new StoryFolds(options.inherited);
  let locale: Locale = 'en';
  let languageName: string | undefined;
  let world: LoadedWorld | null = null;
  // the session's world from each move on (stream version, world), in log order: an execution reads the one before its input
  const worldChanges: { version: number; world: LoadedWorld | null }[] = [];
  let pluginSettings: PluginSettings = {};
  let sessionPlugins: readonly string[] | null = null;
  // a branch's root session (its `session.branched@1`): the prompt cache key its requests sent
  let rootSessionId: string | undefined;
  // the player's preferences from each change on (stream version, preferences), in log order
  const preferenceChanges: { version: number; preferences: SessionPreferences }[] = [];
  const results: RebuiltCall[] = [];
  const fold = (event: StoredEvent) => {
    story.apply(event);
    journal.apply([event]);
  };
  for (const event of events) {
    if (event.type === 'session.branched@1') rootSessionId = event.data.rootSessionId ?? event.data.parentSessionId;
    if (event.type === 'session.created@1') {
      locale = promptLocaleOf(event.data.locale);
      // the name the session recorded (none in sessions recorded before: their block said English or 简体中文, as rebuilt)
      languageName = event.data.languageName;
      const { worldId, worldRevision } = event.data;
      world = worldId ? await worlds.load({ tenantId: event.tenantId, worldId, ...(worldRevision === undefined ? {} : { revision: worldRevision }) }) : null;
      worldChanges.push({ version: event.streamVersion, world });
      pluginSettings = event.data.pluginSettings ?? {};
      sessionPlugins = event.data.plugins ?? null;
    }
    if (event.type === 'session.world-revised@1')
      worldChanges.push({
        version: event.streamVersion,
        world: await worlds.load({ tenantId: event.tenantId, worldId: event.data.worldId, revision: event.data.toRevision }),
      });
    if (event.type === 'session.preferences-changed@1') preferenceChanges.push({ version: event.streamVersion, preferences: event.data.preferences });
    if (event.type === 'compaction.summary-requested@1' && (options.turnId === undefined || event.data.turnId === options.turnId)) {
      // the compaction provider's summary call: re-derived from the request it recorded (no plugin runs)
      results.push(rebuiltSummaryCall(event.data, providers));
    }
    if (event.type === 'llm.calling@1') {
      const d = event.data;
      const execution = journal.get(d.executionId);
      if (!execution) throw new RecordedCallWithoutExecutionError(d.callId, d.executionId);
      const { history, pluginData } = story;
      // the registry generation the execution captured: its manifests, bodies and static segments
      const generation = executionCatalog({ catalog: current, generations: options.generations }, execution).forSession(sessionPlugins);
      const runtime = generation.find(d.pluginId, d.runtimeId);
      if (!runtime) throw new RuntimeNotInCatalogError(d.callId, d.pluginId, d.runtimeId);
      if (options.turnId !== undefined && d.turnId !== options.turnId) {
        fold(event);
        continue;
      }
      // a regenerated turn reads the history without the turn it re-runs, as its worker did
      const without = execution.retryFromTurnId;
      const uncompacted = history.uncompacted(event.streamId, options.historyReadLimit, without);
      const inputs = {
        sessionId: event.streamId,
        ...(rootSessionId === undefined ? {} : { cacheSessionId: rootSessionId }),
        locale,
        ...(languageName === undefined ? {} : { languageName }),
        runtime,
        stageIndex: generation.stageIndex(runtime),
        history: uncompacted,
        turnNumber: history.turnCount(without) + 1,
        summaries: history.savedSummaries(),
        playerInput: execution.input,
        // the mid-turn messages the call recorded it included: the first n the log held before it
        midTurnMessages: execution.midTurnMessages.slice(0, d.midTurnMessages ?? 0),
        outputs: executionOutputs(execution, generation),
        segments: staticSegments(generation.plugins, locale),
        // the world revision the worker read: the last move before the execution's input
        world: [...worldChanges].reverse().find((c) => c.version < execution.submittedVersion)?.world ?? world,
        scanTail: history.committedTail(LORE_SCAN_LIMIT, without),
        selfData: foldedSelfData(pluginData, d.pluginId, runtime.manifest.io.selfData),
        ...executionRequestInputs(generation, runtime, execution),
        exports: resolveRuntimeExports({ catalog: generation, runtime, outputs: execution.outputs.values(), history: uncompacted }),
        pluginSettings,
        // the preferences the worker read: the last change before the execution's input
        preferences: [...preferenceChanges].reverse().find((c) => c.version < execution.submittedVersion)?.preferences ?? NO_PREFERENCES,
        lastFormValues: execution.lastFormValues ?? {},
        eventCatalog: advertisedEvents(generation, runtime),
        // a later step of the agent loop: the conversation its recorded earlier steps make
        loop: loopStepInputs({ runtime, catalog: generation, execution, locale, step: d.step ?? 1, tools: options.tools, mode: d.budget?.mode }),
        // the token budget it was sent with: the ledger of the earlier steps' recorded calls replayed the same way
        ...loopStepBudget({ runtime, execution, step: d.step ?? 1, recorded: d.budget }),
        // the step sent once more without streaming after its streamed call failed
        ...(d.fallback ? { fallback: d.fallback } : {}),
        // the images the worker's history read found, their bytes read again (the log keeps their length, never the bytes)
        recentImages: history.recentImages(options.historyReadLimit, without),
        ...(options.media ? { media: { store: options.media, tenantId: event.tenantId } } : {}),
      };
      // recorded handler results only: no plugin code runs in a rebuild
      const plugins = { registry: generation.host.registry, resolver: new RecordedResolver(d.executionId, execution.extensionResults) };
      const request = await buildRuntimeRequest(inputs, providers, plugins);
      const { body, context, lorebook, segments } = request;
      const rebuilt = JSON.stringify(redactImageData(body));
      results.push({
        callId: d.callId,
        executionId: d.executionId,
        turnId: d.turnId,
        pluginId: d.pluginId,
        runtimeId: d.runtimeId,
        recorded: d.body,
        rebuilt,
        identical: rebuilt === d.body,
        sources: describeSources({ ...inputs, segments }, context, lorebook, history),
      });
      options.inspect?.(results[results.length - 1], { ...request, inputs });
    }
    fold(event);
  }
  return results;
}

/** The source of every section: which plugin, which segment, which summary covers which messages. */
function describeSources(
  inputs: RuntimeRequestInputs,
  context: AssembledContext,
  lorebook: readonly ActivatedLoreEntry[],
  history: HistoryFold,
): SectionSource[] {
  const why = (e: ActivatedLoreEntry) =>
    `${e.id}: ${e.reason.kind === 'constant' ? 'constant' : `keyword "${e.reason.keyword}" in ${e.reason.matchedIn === 'player-input' ? 'the player input' : 'the scanned history'}`}`;
  const lore = (position: string) => lorebook.filter((e) => (typeof e.position === 'object' ? 'depth' : e.position) === position).map(why);
  const runtime = inputs.runtime;
  const placed = placeSegments(inputs.segments, runtimeView(runtime, inputs.stageIndex));
  const ids = (list: { providerPluginId: string; id: string }[]) => list.map((s) => `${s.providerPluginId}/${s.id}`);
  const out: SectionSource[] = [];
  for (const s of context.systemSections) {
    if (s.name === 'preamble') out.push({ section: s.name, source: `framework preamble (${inputs.locale})` });
    else if (s.name === 'runtime-body') out.push({ section: s.name, source: `body of ${runtime.fullId} (${inputs.locale})` });
    else if (s.name === 'segments') out.push({ section: s.name, source: 'stable/session extension segments', items: ids(placed['system-prompt']) });
    else if (s.name === 'turn-segments') out.push({ section: s.name, source: 'pre-history turn segments', items: ids(placed['system-prompt-turn']) });
    else if (s.name === 'events-activation') out.push({ section: s.name, source: runtime.stage ? `in-stage activation: ${runtime.stage}` : 'event catalog' });
    else
      out.push({
        section: s.name,
        source: `lorebook (${s.name === 'worldinfo-before' ? 'before-plugin' : 'after-plugin'})`,
        items: lore(s.name === 'worldinfo-before' ? 'before-plugin' : 'after-plugin'),
      });
  }
  const covered = new Map(history.summariesWithCoverage().map((x) => [x.id, x.messageIds]));
  for (const name of [...new Set(context.messageSections)]) {
    if (name === 'summary') {
      out.push({
        section: name,
        source: 'saved summaries',
        items: inputs.summaries.map((s) => `${s.id} covers ${(covered.get(s.id) ?? []).length} messages: ${(covered.get(s.id) ?? []).join(', ')}`),
      });
    } else if (name === 'history') {
      const h = inputs.history;
      out.push({
        section: name,
        source: `turn_messages: ${h.length} uncompacted messages`,
        items: h.length ? [`${h[0].messageId} … ${h[h.length - 1].messageId}`] : [],
      });
    } else if (name === 'player-input') out.push({ section: name, source: `player input ${inputs.playerInput.messageId}` });
    else if (name === 'mid-turn')
      out.push({ section: name, source: 'messages the player added to this turn', items: (inputs.midTurnMessages ?? []).map((m) => m.messageId) });
    else if (name === 'story-text')
      out.push({
        section: name,
        source: "this turn's story text",
        items: inputs.outputs.filter((o) => o.outputKind === 'story').map((o) => `${o.pluginId}/${o.runtimeId}`),
      });
    else if (name === 'turn-context')
      out.push({
        section: name,
        source: 'turn data blocks and turn segments',
        items: [...selfDataSources(inputs), ...exportSources(inputs), ...ids(placed['turn-context'])],
      });
    else if (name === 'depth')
      out.push({ section: name, source: 'lorebook entries and segments inserted by depth', items: [...lore('depth'), ...ids(placed.depth)] });
    else if (name === 'pre-history' || name === 'post-history')
      out.push({ section: name, source: 'extension segments', items: ids(name === 'pre-history' ? placed['pre-history-messages'] : placed['post-history']) });
    else out.push({ section: name, source: 'framework' });
  }
  return out;
}

/** A recorded summary call of the compaction barrier, its wire body re-derived from the provider's recorded request. */
function rebuiltSummaryCall(d: EventData<'compaction.summary-requested@1'>, providers: ProviderRegistry): RebuiltCall {
  const binding = providers.forSlot(d.slot);
  const rebuilt = JSON.stringify(binding.adapter.buildRequest(summaryCall(d.request, binding)));
  return {
    callId: d.requestId,
    executionId: d.executionId,
    turnId: d.turnId,
    pluginId: d.pluginId,
    runtimeId: 'history.compact@2',
    recorded: d.body,
    rebuilt,
    identical: rebuilt === d.body,
    sources: [{ section: 'summary-request', source: `history.compact@2 provider ${d.pluginId}: its recorded request to the ${d.slot} slot` }],
    purpose: 'compaction-summary',
  };
}

/** The audit's account of the `<runtime-exports>` of a request: `export <name>: <plugin>/<runtime> result <resultId>`. */
function exportSources(inputs: RuntimeRequestInputs): string[] {
  return (inputs.exports ?? []).map((e) => `export ${e.name}: ${e.source.pluginId}/${e.source.runtimeId} result ${e.source.resultId ?? '(none)'}`);
}
