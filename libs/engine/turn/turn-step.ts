import { hasEnded, type HistoryView, historyViewJson, historyViewOf } from '../../events';
import { ExecutionNotFoundError } from '../errors';
import type { RuntimeJob, TurnJob, TurnJobContext, TurnStep } from '../queue';
import { claimExecution, nextClaim, ownClaim } from './claim';
import { commitTurn, missingRuntimes } from '../execution/commit';
import { ExecutionRun } from '../execution/fenced-append';
import { ClaimingRun, type PendingClaim } from '../execution/claiming-run';
import { handOff } from '../execution/hand-off';
import { executionCatalog } from '../catalog/catalog-generations';
import { loadSessionSettings, readSessionJournal } from '../session/session-reads';
import { historyReadLimit, type TurnDeps } from '../execution/deps';
import { keepHistory, type StageHistory } from '../history/history-handoff';
import { loadedHistory, runtimeHistoryLimits } from '../history/history-loader';
import { runCompactionBarrier, unwaitingRuntimes } from '../barrier';
import { type SessionJournal, waitingSuspension } from '../journal/journal';
import { addToLogScope } from '../logging';
import { offerSessionSnapshot, readsSessionPluginData } from '../plugin-host/journal-plugin-data';
import { type RawBuilder, sql } from 'kysely';
import { preferencesKnown } from '../preferences';

const done: TurnStep = { kind: 'done' };

/**
 * One run of a turn job, a step machine over the event log: each run rebuilds the session's
 * journal and decides the next step from it.
 * - the execution has ended (or ends now): hand the session off to its next execution, done;
 * - an earlier input of the session is pending: done (that one's end hands off to this one);
 * - a runtime of it is suspended and not resumed yet: done (the resume enqueues it again);
 * - not claimed by this job yet (or a newer claim fenced this job's out): claim the next attempt
 *   and remember it with the job;
 * - the first stage (catalog order) with runtimes whose outputs are missing: when it holds the
 *   turn's first shared-history agent, its windowed agents start at once and the compaction
 *   barrier runs (`runCompactionBarrier`) before the rest of it; then wait for one runtime job per
 *   missing output (a barrier between stages);
 * - every output is there: commit once, hand off, done. (Usually the runtime job that produced the
 *   last output has committed already, in the same append as that output, and handed off: this
 *   run then finds the execution ended.)
 */
export async function turnStep(deps: TurnDeps, job: TurnJob, ctx: TurnJobContext): Promise<TurnStep> {
  return (await turnStepReading(deps, job, ctx)).step;
}

/**
 * `turnStep`, with the journal it read: the stream as it stood at that read or at the step's last
 * append (its claim, the barrier's), which every append of the step was made at. A runtime the turn
 * job runs inline goes on from it instead of reading the log again (`runRuntimeStep`).
 */
export async function turnStepReading(
  deps: TurnDeps,
  job: TurnJob,
  ctx: TurnJobContext,
  inline?: InlineStage,
): Promise<{ step: TurnStep; journal: SessionJournal }> {
  // after a stage run inline: its journal, current as of the stage's last append, and its history while no event moved it (no read)
  const from = inline?.from;
  if (from && from.history.historyVersion === from.journal.historyVersion) {
    const { journal, history } = from;
    inline.history = history;
    // the views are what they were at the history's version: the barrier of the next stage takes them at the journal's version
    keepHistory({ tenantId: job.tenantId, sessionId: job.sessionId, executionId: job.executionId, streamVersion: journal.version }, history.history);
    return { step: await stepFrom(deps, job, ctx, journal, inline), journal };
  }
  // the read brings the preferences the execution runs with (its barrier's, its inline runtimes'), unless this process knows them;
  // when the job runs the stage inline, the history its runtimes (and the barrier) read too: once a stage, not once a runtime
  const history = inline ? runtimeHistoryLimits(historyReadLimit(deps)) : undefined;
  // and, when its runs read the session's plugin data in this process before, that too (a statement saved: issue 33)
  const pluginData = history && readsSessionPluginData(job) ? deps.pluginData.sessionAlongside(job) : undefined;
  const views = history && stageViews(historyViewJson(job.tenantId, job.sessionId, history), pluginData?.read);
  const { journal, alongside } = await readSessionJournal(deps, job, {
    preferences: !preferencesKnown(job.sessionId, job.executionId),
    ...(views ? { alongside: views.alongside } : {}),
  });
  if (history && views) {
    const read = views.split(alongside);
    if (pluginData) offerSessionSnapshot(deps.pluginData, journal, job, pluginData.snapshot(read.pluginData));
    const kept = keepReadHistory(job, journal, historyViewOf(read.history, history));
    if (kept && inline) inline.history = kept;
  }
  return { step: await stepFrom(deps, job, ctx, journal, inline), journal };
}

/**
 * What a stage's step reads beside the log (`readSessionJournal`'s `alongside`): the history view
 * alone, or with the session's plugin data as one JSON object; `split` takes the value read apart.
 */
function stageViews(
  history: RawBuilder<unknown>,
  pluginData: RawBuilder<unknown> | undefined,
): { alongside: RawBuilder<unknown>; split(read: unknown): { history: unknown; pluginData?: unknown } } {
  if (!pluginData) return { alongside: history, split: (read) => ({ history: read }) };
  return {
    alongside: sql`json_build_object('history', ${history}, 'pluginData', ${pluginData})`,
    split: (read) => {
      const both: object = typeof read === 'object' && read !== null ? read : {};
      return { history: 'history' in both ? both.history : undefined, pluginData: 'pluginData' in both ? both.pluginData : undefined };
    },
  };
}

/**
 * The history read with the journal, at its version, kept for this execution's barrier and
 * runtime in this process (`keptHistory`: taken while nothing was appended since). Not for a
 * regenerated turn (its read leaves the turn it re-runs out) nor past the bound (the runtime's own
 * read fails it).
 */
function keepReadHistory(job: TurnJob, journal: SessionJournal, view: HistoryView): StageHistory | undefined {
  const execution = journal.get(job.executionId);
  if (!execution || execution.status !== 'pending' || execution.retryFromTurnId !== undefined || view.overBound) return undefined;
  const history = loadedHistory(view);
  keepHistory({ tenantId: job.tenantId, sessionId: job.sessionId, executionId: job.executionId, streamVersion: journal.version }, history);
  return { history, historyVersion: journal.historyVersion };
}

/**
 * How the caller runs a stage (`TurnRunner`): `runs(children)` true when it runs that stage inline,
 * in this job's run, right after the step. A claim the step makes for such a stage is not appended
 * on its own: it is left in `pending` and goes in front of the attempt's first append (the
 * barrier's, or the runtime's `llm.calling` / output: `ClaimingRun`); the caller stores it alone
 * if the attempt fails before any append (`ClaimingRun.land`).
 */
export interface InlineStage {
  runs(children: readonly RuntimeJob[]): boolean;
  /** Set by the step that defers its claim: the claim, and the journal it was made from. */
  pending?: { claim: PendingClaim; journal: SessionJournal };
  /** Set by the step's read: the shared history view read with the journal, for the stage's runtimes (`RuntimeStepOptions.history`). */
  history?: StageHistory;
  /**
   * Set by the caller after a stage it ran inline (issue 33: a read of the log per stage): the
   * journal that stage's runs left and the history view they used. The step goes on from them with
   * no read of the log while the journal's `historyVersion` is still the view's (else it reads).
   * That journal is as current as a read would be: each of the stage's appends was made at the
   * stream's head (the one-statement append checks it under the stream's lock) or caught up under
   * the lock with what came first, and the stage ends with its runtimes' last appends (or reads);
   * whatever comes after it is met by the next append, which catches up and checks the fence, as
   * what comes after a read is (a model call is sent only once its `llm.calling` is recorded).
   */
  from?: { journal: SessionJournal; history: StageHistory };
}

async function stepFrom(deps: TurnDeps, job: TurnJob, ctx: TurnJobContext, journal: SessionJournal, inline?: InlineStage): Promise<TurnStep> {
  const execution = journal.get(job.executionId);
  let attempt = ctx.claimedAttempt;
  if (!execution) {
    // the journal starts at the earliest pending input: a finished execution is not in it
    const finished = await deps.readModels.execution(job.tenantId, job.executionId);
    if (!finished || !hasEnded(finished)) throw new ExecutionNotFoundError(job.executionId, job.sessionId);
    await handOff(deps, job, journal); // a repeated job: handing off again is harmless (idempotent)
    return done;
  }
  if (execution.status !== 'pending') {
    await handOff(deps, job, journal);
    return done;
  }
  // one session runs one execution at a time, in submission order
  if (journal.pending()[0].executionId !== execution.executionId) return done;
  // a runtime suspended on a tool: the job ends without failing; the resume enqueues the execution again
  if (waitingSuspension(execution)) return done;
  // the catalog and the stage depend on nothing the claim writes (its generation is the execution's, else the current one)
  const catalog = executionCatalog(deps, execution).forSession((await loadSessionSettings(deps, job.sessionId)).plugins);
  const missing = missingRuntimes(catalog, execution.outputs, execution.activation);
  const childrenOf = (claimed: number) =>
    missing.map((r): RuntimeJob => ({ executionId: job.executionId, sessionId: job.sessionId, tenantId: job.tenantId, attempt: claimed, ...r }));
  let claim: PendingClaim | undefined;
  // a claim an earlier run of this job made, found in the log (the queue stores none with the job: `TurnJobContext.claimant`)
  const own = attempt === null ? ownClaim(execution, ctx.claimant) : null;
  if (own !== null) {
    attempt = own;
    await ctx.recordClaim(attempt);
    addToLogScope({ attempt });
  }
  if (attempt === null || attempt !== execution.latestAttempt) {
    // the views this attempt's runtimes read (turn_messages, summaries) are applied with each
    // append: every earlier turn of the session is in them once its commit is
    const next = nextClaim(deps, execution, ctx.claimant);
    const children = childrenOf(next.attempt);
    // a stage run inline, with no runtime started before the barrier: the claim goes with the attempt's first append
    if (inline && missing.length > 0 && inline.runs(children) && unwaitingRuntimes(catalog, execution, children).length === 0) {
      claim = next;
      inline.pending = { claim, journal };
      attempt = claim.attempt;
    } else {
      attempt = await claimExecution(deps, job, journal, execution, ctx.claimant);
      if (attempt === null) return { kind: 'later', delayMs: 0 }; // the session moved on: look again
    }
    await ctx.recordClaim(attempt);
    addToLogScope({ attempt });
  }
  if (missing.length > 0) {
    const children = childrenOf(attempt);
    // spec §1 step 5: a runtime with a history window does not wait for the barrier: the stage's
    // windowed agents start now, the rest of the stage after the barrier
    const unwaiting = unwaitingRuntimes(catalog, execution, children);
    if (unwaiting.length > 0) await ctx.startChildren(unwaiting);
    // the compaction barrier, once, before the stage of the first shared-history agent starts (its
    // runtimes, on other workers, then read the compacted history)
    // the stage runs inline next, on this journal: what the barrier records goes with the attempt's next append (`carry`)
    const carries = inline !== undefined && inline.runs(children) && unwaiting.length === 0;
    const run = claim ? new ClaimingRun(deps.store, journal, job, claim, { carries }) : new ExecutionRun(deps.store, journal, job, attempt, { carries });
    await runCompactionBarrier(deps, { job, run, catalog, stage: missing });
    return { kind: 'awaitChildren', children };
  }
  const run = new ExecutionRun(deps.store, journal, job, attempt);
  await commitTurn(catalog, run);
  await handOff(deps, job, run.journal);
  return done;
}
