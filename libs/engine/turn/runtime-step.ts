import { FencedOutError, JobHandedBackError, RuntimeNotFoundError, TurnDeadlineError } from '../errors';
import { type TurnDeadline, turnDeadline } from '../execution/turn-deadline';
import { DEFAULT_TURN_DEADLINE_MS } from '../config';
import { runFunctionStep } from './function-step';
import { keptHistory, type StageHistory } from '../history/history-handoff';
import { type HistoryView, historyViewJson, historyViewOf } from '../../events';
import { loadedHistory, loadRuntimeHistory, previousTurnScope, retryRead, retryScope, runtimeHistoryLimits } from '../history/history-loader';
import { hasCompactionProvider } from '../history-use';
import { type ExecutionJournal, runtimeKey, type SessionJournal } from '../journal/journal';
import type { RuntimeJob } from '../queue';
import { historyReadLimit, type TurnDeps } from '../execution/deps';
import { ExecutionRun } from '../execution/fenced-append';
import { ClaimingRun, type PendingClaim } from '../execution/claiming-run';
import { loadSessionSettings, readSessionJournal } from '../session/session-reads';
import { functionInputs } from '../inputs';
import { executionCatalog } from '../catalog/catalog-generations';
import { runAgentLoop } from '../agent';
import { conditionHolds } from './runtime-condition';
import { recordRuntimeOutput } from '../execution/record-output';
import { annotate, ATTR } from '../../telemetry';
import { executionPreferences, preferencesKnown } from '../preferences';

/**
 * produced: this job called the model and recorded the output; reused: an earlier job had; fenced:
 * not this attempt's to run; suspended: a tool suspended the runtime (the execution waits for a resume).
 */
export type RuntimeStepResult = 'produced' | 'reused' | 'fenced' | 'suspended';

export interface RuntimeStepOptions {
  /**
   * The session's journal as the caller holds it (a turn job running the runtime inline: the stream
   * as its read or its last append left it), instead of a read of the log. The runtime's appends
   * keep it current. What came since (an input, a cancel) is met by the fenced appends, which catch
   * up under the stream's lock, and by the end watch; a call is sent only after its `llm.calling`
   * append, so never on an attempt fenced out before it.
   */
  journal?: SessionJournal;
  /**
   * The attempt's claim when the turn step left it pending (not appended: `ClaimingRun`), with
   * `journal`: the runtime's first append carries it.
   */
  claim?: PendingClaim;
  /**
   * The shared history view the turn step read with `journal` (a stage run inline): used while the
   * journal's `historyVersion` is still the one it was read at, instead of a read of its own.
   */
  history?: StageHistory;
  /**
   * The execution's end as its stage's runtimes run inline watch it together (`watchEnd`, made by
   * the turn job for the stage and let go by it): used by a runtime of the same execution and
   * attempt instead of a watch of its own (one per stage, not one per runtime: issue 33).
   */
  watch?: EndWatch;
}

/**
 * One runtime of one attempt: rebuilds the journal, checks the fence, reuses an output already
 * produced, else runs a function runtime's code or an agent runtime's loop (libs/engine/agent: each
 * step built from the log's state, the same inputs a rebuild from the events uses, and recorded;
 * a loop an earlier attempt left is resumed from its last recorded step).
 * The output is recorded once per execution and runtime: a copy of this job that ran at the same
 * time (a lost lock) and recorded first wins, this one records only its responses.
 * The output that completes the last stage commits the turn in the same append (one transaction
 * instead of two, and no wait for the turn job to wake), and the session is handed off from here;
 * the turn job then only finds the execution ended.
 */
export async function runRuntimeStep(deps: TurnDeps, job: RuntimeJob, options: RuntimeStepOptions = {}): Promise<RuntimeStepResult> {
  const shared = options.watch && options.watch.executionId === job.executionId && options.watch.attempt === job.attempt ? options.watch : undefined;
  const watch = shared ?? (await watchEnd(deps, job));
  try {
    const result = await runtimeStep(deps, job, watch.ended, options);
    annotate({ [ATTR.runtimeResult]: result });
    return result;
  } catch (error) {
    // this process is stopping: the job is handed back, whatever its aborted call threw
    if (watch.ended.reason instanceof JobHandedBackError) throw watch.ended.reason;
    // the execution ended elsewhere (cancelled, failed by another job): nothing of this job can be recorded any more
    if (watch.ended.aborted && !(error instanceof FencedOutError)) throw new FencedOutError(job.executionId, job.attempt);
    throw error;
  } finally {
    // a stage's watch is let go by the turn job that made it, once every runtime of the stage ran
    if (!shared) watch.release();
  }
}

/** The end of one attempt of an execution, watched (`watchEnd`): `ended` aborts with its reason; `release` stops the watching. */
export interface EndWatch {
  executionId: string;
  attempt: number;
  ended: AbortSignal;
  release(): void;
}

/**
 * The execution's end while this job runs, as a signal (`TurnDeps.ends`): registered before the job
 * reads the log, so an end committed after that read is heard, and one committed before is in it
 * (or met by the job's fenced appends). A cancel aborts the job's model call mid-stream with it;
 * so does this process's stop past its grace period (`TurnDeps.stopping`), the reason then a
 * `JobHandedBackError`.
 */
export async function watchEnd(deps: TurnDeps, job: Pick<RuntimeJob, 'tenantId' | 'executionId' | 'attempt'>): Promise<EndWatch> {
  const ended = new AbortController();
  const stop = new AbortController();
  const handBack = () => ended.abort(new JobHandedBackError(job.executionId, job.attempt));
  if (deps.stopping?.aborted) handBack();
  deps.stopping?.addEventListener('abort', handBack, { once: true, signal: stop.signal });
  if (deps.ends) {
    const watch = await deps.ends.watch({ tenantId: job.tenantId, executionId: job.executionId, signal: stop.signal });
    void watch.ended.then(() => ended.abort(new FencedOutError(job.executionId, job.attempt)));
  }
  return { executionId: job.executionId, attempt: job.attempt, ended: ended.signal, release: () => stop.abort(RELEASED) };
}

/**
 * The reason a job's watch is let go with: what listens on it (the stop listener, the execution's
 * watch) only stops listening, nobody reads the reason. `abort()` without one makes a new
 * `DOMException` with its stack each time, once per runtime job (issue 33: CPU per turn).
 */
const RELEASED = Symbol('runtime job watch released');

async function runtimeStep(deps: TurnDeps, job: RuntimeJob, ended: AbortSignal, given: RuntimeStepOptions): Promise<RuntimeStepResult> {
  // the read brings the preferences the execution runs with, unless this process knows them, and the history view (`readWithHistory`)
  const { journal, view } = given.journal ? { journal: given.journal, view: undefined } : await readWithHistory(deps, job);
  // the journal was just read (or kept current by the turn step's appends): the first model call needs no catch-up read
  const run =
    given.claim && !given.claim.landed && given.claim.attempt === job.attempt
      ? new ClaimingRun(deps.store, journal, job, given.claim, { current: true })
      : new ExecutionRun(deps.store, journal, job, job.attempt, { current: true });
  const current = currentOf(run);
  if (!current) return 'fenced';
  // the world revision in effect before the execution's input (a rebuild reads the same)
  const settings = await loadSessionSettings(deps, job.sessionId, { before: current.submittedVersion });
  // the generation the execution captured, as far as the session's plugins go
  const catalog = executionCatalog(deps, current).forSession(settings.plugins);
  const runtime = catalog.find(job.pluginId, job.runtimeId);
  if (!runtime) throw new RuntimeNotFoundError(job.pluginId, job.runtimeId);
  const key = runtimeKey(job.pluginId, job.runtimeId);
  const execution = run.execution;
  if (execution.outputs.has(key)) return 'reused'; // produced by an earlier job or attempt: never called again
  // `schedule.when` says no: skipped, recorded as an empty output (no model or function call)
  if (!conditionHolds(catalog, runtime.manifest.schedule.when, execution.outputs.values())) {
    return recordRuntimeOutput({ deps, job, run, runtime, catalog, text: '' });
  }
  // the rows the barrier of this execution read in this process, when the session has not moved since
  // (or the view its turn step read, for a stage run inline, while no event moved the history since: its siblings' appends do not)
  const kept =
    (given.history?.historyVersion === journal.historyVersion ? given.history.history : undefined) ??
    keptHistory({ tenantId: job.tenantId, sessionId: job.sessionId, executionId: job.executionId, streamVersion: journal.version });
  // read at this version of the history views or later: a model call is recorded only while they are still there
  const historyVersion = journal.historyVersion;
  const { locale, languageName, world, pluginSettings, rootSessionId } = settings;
  const history =
    kept ??
    // the view read with the journal, when it is the one this runtime's own read would give: not a regenerated turn's (its read leaves a turn out), within the bound (else that read fails it, naming the fix)
    (view && execution.retryFromTurnId === undefined && !view.overBound
      ? loadedHistory(view)
      : await loadRuntimeHistory(deps.readModels, job.tenantId, job.sessionId, historyReadLimit(deps), {
          ...retryRead(execution),
          compaction: hasCompactionProvider(catalog),
        }));
  const m = runtime.manifest;
  annotate({ [ATTR.runtimeType]: m.type });
  const scope = {
    tenantId: job.tenantId,
    sessionId: job.sessionId,
    turnNumber: history.stats.turns + 1,
    locale,
    world,
    pluginSettings,
    ...retryScope(execution),
    ...previousTurnScope(history),
  };
  if (m.type === 'function') return runFunctionStep(deps, { job, run, runtime, catalog, scope, inputs: functionInputs(catalog, runtime, execution) });
  // the player's preferences as the log held them before the execution's input (a rebuild reads the same)
  const preferences = await executionPreferences(deps.store, job.sessionId, execution, journal);
  // past the turn's deadline (counted from this attempt's first model call) the call running is aborted and the turn fails
  const deadline = turnDeadlineTimer(deps, job);
  // the agent loop: each step recorded, resumed from the last recorded one (libs/engine/agent)
  try {
    return await runAgentLoop(deps, {
      job,
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
      historyVersion,
      ended,
      turnDeadline: deadline,
    });
  } finally {
    deadline.clear();
  }
}

/**
 * A runtime job's read of the log (issue 33): the session's journal and, in the same statement and
 * snapshot, the shared history view as the runtime's own read gives it (`loadRuntimeHistory`, one
 * statement of its own otherwise, per runtime job: nine in an Emberback turn's post-turn stage).
 * The view is then at the journal's version exactly, as `historyUnchanged` fences it. Read also
 * when this process keeps a history of the execution (`keptHistory`): which version it was kept at
 * tells nothing before the journal is read, and one kept by an earlier stage's barrier is stale.
 */
async function readWithHistory(deps: TurnDeps, job: RuntimeJob): Promise<{ journal: SessionJournal; view: HistoryView }> {
  const limits = runtimeHistoryLimits(historyReadLimit(deps));
  const { journal, alongside } = await readSessionJournal(deps, job, {
    preferences: !preferencesKnown(job.sessionId, job.executionId),
    alongside: historyViewJson(job.tenantId, job.sessionId, limits),
  });
  return { journal, view: historyViewOf(alongside, limits) };
}

/** The execution as the run's fence sees it, or null when the run's attempt is not (or cannot become) the current one. */
function currentOf(run: ExecutionRun): ExecutionJournal | null {
  try {
    return run.execution;
  } catch (error) {
    if (error instanceof FencedOutError) return null;
    throw error;
  }
}

/** This attempt's turn deadline: its clock starts when the attempt sends its first model call (../execution/turn-deadline). */
function turnDeadlineTimer(deps: TurnDeps, job: RuntimeJob): TurnDeadline {
  const deadlineMs = deps.options.turnDeadlineMs ?? DEFAULT_TURN_DEADLINE_MS;
  return turnDeadline({
    deadlineMs,
    failure: () => new TurnDeadlineError(job.executionId, deadlineMs, `runtime ${job.pluginId}/${job.runtimeId} was waiting for its model`),
  });
}
