import { randomUUID } from 'node:crypto';
import { compactionLimits, discardingCutReplies, estimateTokens, type HistoryMessage, validateCompaction } from '../../context';
import { EngineError } from '../../errors';
import { CompactionPrefixMismatchError, diagnosticText, isDatabaseUnavailable, type NewEvent } from '../../events';
import { CompactResult, type CompactInput, type CompactionContext, type PluginHistoryMessage } from '../../plugins-sdk';
import { agentRequestInputs } from '../agent/request-inputs';
import { compactionEvent } from '../compaction';
import { FencedOutError } from '../errors';
import { keepHistory, keptHistory } from '../history/history-handoff';
import { loadRuntimeHistory, previousTurnScope, retryRead, retryScope } from '../history/history-loader';
import { type ExecutionJournal, runtimeKey } from '../journal/journal';
import { handlerContext, type ExecutionScope } from '../plugin-host/handler-context';
import { within } from '../plugin-host/invoke';
import type { RegisteredExtension } from '../plugin-host/registry';
import { transformHistory, type RequestPlugins } from '../plugin-host/request-extensions';
import { LiveResolver } from '../plugin-host/resolver';
import { executionServices } from '../plugin-host/execution-services';
import { resolvedEvents } from '../plugin-host/resolved-events';
import { storePluginData } from '../plugin-host/store-plugin-data';
import { pluginDataAt } from '../plugin-host/journal-plugin-data';
import type { TurnJob } from '../queue';
import type { CatalogRuntime, RuntimeCatalog } from '../catalog/runtime-catalog';
import { buildRuntimeCall } from '../request/runtime-request';
import { workerAssemblies } from '../request/assembly-reuse';
import { executionPreferences } from '../preferences';
import { readSelfData, selfDataUnchanged } from '../request/self-data';
import { toolSetOf } from '../tools';
import { historyReadLimit, type TurnDeps } from '../execution/deps';
import type { ExecutionRun } from '../execution/fenced-append';
import { loadSessionSettings } from '../session/session-reads';
import { RecordedSummaryModel } from './summary-model';
import { compactionWindows, requestTokensOver } from './trigger';

/** How long a `history.compact@2` provider may take (it calls the summary model, possibly several times). */
export const COMPACTION_TIMEOUT_MS = 10 * 60_000;

type Outcome = 'compacted' | 'nothing' | 'rejected' | 'skipped' | 'failed';

export type BarrierResult =
  /** The barrier is not this stage's, or it ran already in this execution. */
  | { kind: 'not-here' }
  /** No `history.compact@2` provider is registered: nothing compacts. */
  | { kind: 'no-provider' }
  /** `estimatedTokens`: the estimate, or a bound of it (the texts' lengths) when that is under the threshold already. */
  | { kind: 'not-needed'; estimatedTokens: number; threshold: number }
  | { kind: 'ran'; outcome: Outcome; estimatedTokens: number; threshold: number };

type RuntimeRef = { pluginId: string; runtimeId: string };

/** An agent runtime that declares a history window (`agent.history.maxTurns`): it neither triggers the compaction barrier nor waits for it (spec §1 step 5). */
function windowedAgent(runtime: CatalogRuntime): boolean {
  return runtime.manifest.agent !== null && runtime.manifest.agent.history?.maxTurns !== undefined;
}

/** `windowedAgent` for a runtime of the catalog named by its ids. */
function windowedIn(catalog: RuntimeCatalog, ref: RuntimeRef): boolean {
  const runtime = catalog.find(ref.pluginId, ref.runtimeId);
  return runtime !== undefined && windowedAgent(runtime);
}

/**
 * The agent whose request decides the turn's compaction (spec §1 step 5): the first agent runtime
 * of the execution (stage order; an activation's one runtime) that uses the shared history view,
 * i.e. declares no `agent.history.maxTurns` window. null: none does, the turn has no barrier.
 */
export function barrierRuntime(catalog: RuntimeCatalog, execution: Pick<ExecutionJournal, 'activation'>): CatalogRuntime | null {
  const runtimes = execution.activation
    ? [catalog.find(execution.activation.pluginId, execution.activation.runtimeId)].filter((r) => r !== undefined)
    : catalog.groups().flatMap((g) => g.runtimes);
  return runtimes.find((r) => r.manifest.agent !== null && !windowedAgent(r)) ?? null;
}

/**
 * The barrier agent when the execution's barrier is still to run before `stage` (the runtimes whose
 * outputs are missing, as the turn job is about to enqueue them): the agent is among them, the
 * barrier has not ended, and none of the stage's runtimes that wait for it has started (a turn job
 * run again after enqueuing them: too late to change their history). Else null. The stage's
 * windowed agents do not count: they never wait, so they may have started (or ended) already.
 */
function pendingBarrier(catalog: RuntimeCatalog, execution: ExecutionJournal, stage: readonly RuntimeRef[]): CatalogRuntime | null {
  const runtime = barrierRuntime(catalog, execution);
  if (!runtime || execution.barrierPassed) return null;
  if (!stage.some((r) => r.pluginId === runtime.pluginId && r.runtimeId === runtime.runtimeId)) return null;
  const waits = (r: RuntimeRef) => !windowedIn(catalog, r);
  const started =
    [...execution.outputs.values()].some((o) => o.stage === runtime.stage && waits(o)) ||
    stage.some((r) => waits(r) && execution.agentLoops.has(runtimeKey(r.pluginId, r.runtimeId)));
  return started ? null : runtime;
}

/** The runtimes of `stage` that do not wait for its pending compaction barrier (its windowed agents); none when no barrier is pending there. */
export function unwaitingRuntimes<T extends RuntimeRef>(catalog: RuntimeCatalog, execution: ExecutionJournal, stage: readonly T[]): T[] {
  return pendingBarrier(catalog, execution, stage) ? stage.filter((r) => windowedIn(catalog, r)) : [];
}

/**
 * The compaction barrier of one execution, a step of its turn job (spec §1 step 5): before the turn
 * job enqueues the stage holding the barrier agent (its runtimes run in parallel on other workers),
 * it estimates that agent's request (its own system prompt and turn context, built as its first
 * step would be) against the trigger window; above the threshold, the single `history.compact@2`
 * provider compacts, its result is validated and saved in one append (`history.compacted@1` with
 * `compaction.barrier-passed@1`). The stage's runtime jobs start after it and read the history and
 * summaries then: every agent of the turn sees the same compacted history, the barrier runs once.
 * A runtime with a history window neither triggers nor waits: the turn job starts the stage's
 * windowed agents before the barrier (`unwaitingRuntimes`), and a compaction that lands while one
 * of them runs sends its job round again before its next model call (`historyUnchanged`). Every
 * ending lets the turn go on; the barrier runs at most once per execution (`barrierPassed`), and
 * not once a runtime of the stage that waits for it has started.
 */
export async function runCompactionBarrier(
  deps: TurnDeps,
  args: { job: TurnJob; run: ExecutionRun; catalog: RuntimeCatalog; stage: readonly RuntimeRef[] },
): Promise<BarrierResult> {
  const { job, run, catalog } = args;
  const execution = run.execution;
  const runtime = pendingBarrier(catalog, execution, args.stage);
  if (!runtime) return { kind: 'not-here' };
  const [provider] = catalog.host.registry.providers('history.compact@2');
  if (!provider) return { kind: 'no-provider' };

  // the history as the stage's runtime jobs read it (the summaries' coverage, which grows with the
  // session, only once compaction is needed); read at the journal's version
  const readAt = run.journal.version;
  // the history that came with the journal's read (the turn step's), when nothing was appended since
  const kept = keptHistory({ tenantId: job.tenantId, sessionId: job.sessionId, executionId: job.executionId, streamVersion: readAt });
  const [{ locale, languageName, world, pluginSettings, rootSessionId }, history, preferences] = await Promise.all([
    loadSessionSettings(deps, job.sessionId, { before: execution.submittedVersion }),
    kept ?? loadRuntimeHistory(deps.readModels, job.tenantId, job.sessionId, historyReadLimit(deps), { ...retryRead(execution), compaction: true }),
    executionPreferences(deps.store, job.sessionId, execution, run.journal),
  ]);
  const scope: ExecutionScope = {
    tenantId: job.tenantId,
    sessionId: job.sessionId,
    turnNumber: history.stats.turns + 1,
    locale,
    world,
    pluginSettings,
    ...retryScope(execution),
    ...previousTurnScope(history),
  };
  const runtimeJob = { ...job, attempt: run.attempt, pluginId: runtime.pluginId, runtimeId: runtime.runtimeId };
  const dataVersion = run.journal.pluginDataVersion;
  // the stage's runtimes read the same at the same version of the journal: answered once (`pluginDataAt`)
  const pluginData = pluginDataAt(deps.pluginData, run.journal);
  const selfData = await readSelfData(
    pluginData,
    { tenantId: job.tenantId, sessionId: job.sessionId, pluginId: runtime.pluginId },
    runtime.manifest.io.selfData,
  );
  const resolver = new LiveResolver(execution.extensionResults, catalog.host.invoker(scope, storePluginData(pluginData)));
  const plugins: RequestPlugins = { registry: catalog.host.registry, resolver };
  const definitions = toolSetOf(deps).definitions(runtime, catalog);
  let request: Awaited<ReturnType<typeof buildRuntimeCall>>;
  try {
    // the call the estimate reads, without its wire body (the step builds that)
    request = await buildRuntimeCall(
      agentRequestInputs(
        {
          deps,
          job: runtimeJob,
          run,
          runtime,
          catalog,
          scope,
          locale,
          languageName,
          world,
          pluginSettings,
          preferences,
          ...(rootSessionId === undefined ? {} : { rootSessionId }),
          history,
          definitions,
        },
        { selfData, conversation: [] },
      ),
      deps.providers,
      plugins,
      // the step's build (with its budget) takes this assembly again when its params are the same
      { assemblies: workerAssemblies },
    );
  } catch (error) {
    // the request cannot be built (a plugin handler failed): no estimate, no barrier; the runtime's
    // own job meets the same failure and records it as usual
    if (!continuable(error)) throw error;
    deps.logger.warn(`execution ${job.executionId}: no compaction estimate`, { err: error });
    return { kind: 'not-here' };
  }
  // the handler results the estimate obtained, recorded now: the runtime jobs reuse them (a handler
  // runs once per input and execution), and a rebuild reads them as it reads any other
  const unchanged = () => selfDataUnchanged(run.journal, { job: runtimeJob, read: selfData.length > 0, dataVersion });
  let appended = 0;
  // recorded with the attempt's next append on the journal (with its claim when that is still
  // pending: `ClaimingRun`), the runtime's model call or the barrier's end below: no append of
  // their own (issue 33); a runtime job started early (`startChildren`) has its own journal: appended now
  const fresh = [...resolver.fresh]; // the estimate's (a compaction below may resolve more: not recorded here)
  const build = (current: ExecutionJournal) => [...unchanged(), ...resolvedEvents(fresh, current, run.attempt)];
  if (!run.carry({ results: fresh, build })) {
    await run.append((current) => {
      const events = build(current);
      appended = events.length;
      return events;
    });
  }
  const windows = compactionWindows(deps.providers);
  // far under the threshold, the texts' lengths tell (no character counted); `estimatedTokens` is then that bound
  const { over, tokens: estimatedTokens } = requestTokensOver(request.call, windows.threshold);
  if (!over) {
    // nothing appended since the read but the handler results above (which change no history view):
    // the stage's runtime jobs in this process take the same rows
    if (run.journal.version === readAt + appended)
      keepHistory({ tenantId: job.tenantId, sessionId: job.sessionId, executionId: job.executionId, streamVersion: run.journal.version }, history);
    return { kind: 'not-needed', estimatedTokens, threshold: windows.threshold };
  }

  const passed = (outcome: Outcome, extra: { compactionId?: string; detail?: string } = {}): NewEvent => ({
    type: 'compaction.barrier-passed@1',
    data: {
      executionId: job.executionId,
      turnId: execution.turnId,
      attempt: run.attempt,
      pluginId: runtime.pluginId,
      runtimeId: runtime.runtimeId,
      estimatedTokens,
      triggerWindow: windows.effective,
      thresholdTokens: windows.threshold,
      outcome,
      ...(extra.compactionId !== undefined ? { compactionId: extra.compactionId } : {}),
      ...(extra.detail !== undefined ? { detail: diagnosticText(extra.detail) } : {}),
    },
  });
  const end = async (outcome: Outcome, extra: { compactionId?: string; detail?: string } = {}): Promise<BarrierResult> => {
    if (outcome !== 'compacted' && outcome !== 'nothing')
      deps.logger.warn(`execution ${job.executionId}: compaction ${outcome}`, { outcome, detail: extra.detail });
    await run.append((e) => (e.barrierPassed ? [] : [passed(outcome, extra)]));
    return { kind: 'ran', outcome, estimatedTokens, threshold: windows.threshold };
  };

  const covered = await deps.readModels.summaries(job.tenantId, job.sessionId, { withMessageIds: true });
  const input: CompactInput = {
    messages: (await transformHistory(plugins, history.messages)).map(pluginMessage),
    summaries: covered.map((s) => ({ summaryId: s.id, content: s.content, messageIds: s.messageIds ?? [], truncated: s.truncated ?? false })),
    windows: { effective: windows.effective, fastInput: windows.fastInput },
  };
  let result: CompactResult;
  try {
    result = await compact(deps, { provider, input, scope, run, catalog });
  } catch (error) {
    if (!continuable(error)) throw error;
    return end('failed', { detail: error instanceof Error ? error.message : String(error) });
  }
  const validation = validateCompaction({
    uncompactedPrefix: await deps.readModels.uncompactedPrefix(job.tenantId, job.sessionId, history.messages.length),
    summaries: covered.map((s) => ({ summaryId: s.id, content: s.content })),
    result,
    limits: compactionLimits(windows.effective),
    newSummaryId: randomUUID,
  });
  if (validation.status === 'nothing') return end('nothing');
  if (validation.status === 'rejected') return end('rejected', { detail: JSON.stringify(validation.problems.slice(0, 20)) });
  const compactionId = randomUUID();
  try {
    // one append at the journal's version: the summaries, the markers and the barrier's end
    await run.append((e) => (e.barrierPassed ? [] : [compactionEvent(validation.plan, compactionId), passed('compacted', { compactionId })]));
  } catch (error) {
    // safeguard: the stored uncompacted prefix is not what the plan marks; nothing changed
    if (error instanceof CompactionPrefixMismatchError) return end('skipped', { detail: error.message });
    throw error;
  }
  return { kind: 'ran', outcome: 'compacted', estimatedTokens, threshold: windows.threshold };
}

/** Runs the provider with the compaction context (the recorded summary model, the framework's estimate) and parses its result. */
async function compact(
  deps: TurnDeps,
  args: { provider: RegisteredExtension; input: CompactInput; scope: ExecutionScope; run: ExecutionRun; catalog: RuntimeCatalog },
): Promise<CompactResult> {
  const { provider, catalog } = args;
  const model = new RecordedSummaryModel({ run: args.run, providers: deps.providers, pluginId: provider.pluginId, metrics: deps.metrics });
  const source = storePluginData(pluginDataAt(deps.pluginData, args.run.journal));
  const ctx: CompactionContext = Object.freeze({
    ...handlerContext(
      args.scope,
      provider.pluginId,
      source,
      catalog.host.plugins.get(provider.pluginId),
      executionServices({
        pluginId: provider.pluginId,
        host: catalog.host,
        scope: args.scope,
        pluginData: source,
        recorded: args.run.execution.extensionResults,
      }),
    ),
    summaryModel: discardingCutReplies(model),
    estimateTokens,
  });
  const raw = await within(
    COMPACTION_TIMEOUT_MS,
    () => provider.handler(structuredClone(args.input) as never, ctx),
    () => new CompactionFailedError(provider.pluginId, `did not answer within ${COMPACTION_TIMEOUT_MS} ms`),
  );
  const parsed = CompactResult.safeParse(raw);
  if (!parsed.success) throw new CompactionFailedError(provider.pluginId, `returned an invalid result: ${parsed.error.message}`);
  return parsed.data;
}

/** A compaction provider failed (threw, timed out, returned no valid result): the turn goes on without compaction. */
export class CompactionFailedError extends EngineError {
  readonly code = 'COMPACTION_FAILED';
  readonly category = 'invalid';
  constructor(
    readonly pluginId: string,
    detail: string,
  ) {
    super(`plugin ${pluginId}: history.compact@2 ${detail}`);
  }
}

/**
 * A failure the turn goes on after (the barrier ends as `failed`): anything but a fenced-out
 * attempt, the database away, or a failure the job's retry can fix (the summary model unavailable:
 * the retried job reuses the replies recorded so far).
 */
function continuable(error: unknown): boolean {
  if (error instanceof FencedOutError || isDatabaseUnavailable(error)) return false;
  return !(error instanceof EngineError && (error.category === 'unavailable' || error.category === 'conflict'));
}

const pluginMessage = (m: HistoryMessage): PluginHistoryMessage => ({
  messageId: m.messageId,
  turnId: m.turnId,
  role: m.role,
  sourceType: m.sourceType,
  pluginId: m.pluginId,
  runtimeId: m.runtimeId,
  outputKind: m.outputKind,
  text: m.text,
});
