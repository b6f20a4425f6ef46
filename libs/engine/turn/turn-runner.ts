import { isDatabaseUnavailable } from '../../events';
import { FencedOutError, HistoryRaceError, isPermanentFailure, JobHandedBackError } from '../errors';
import { PluginDataRaceError } from '../plugin-host/plugin-data-errors';
import {
  type JobAttempt,
  type JobOutcome,
  type QueueHandlers,
  type RuntimeJob,
  runtimeJobId,
  type TurnJob,
  type TurnJobContext,
  type TurnStep,
} from '../queue';
import { withTraceCarrier } from '../../telemetry';
import { jobLogFields, withLogScope } from '../logging';
import { DATABASE_RETRY_MS, historyReadLimit, type TurnDeps } from '../execution/deps';
import { recordFailure } from './failure';
import { runRuntimeStep, type RuntimeStepOptions, type RuntimeStepResult, watchEnd } from './runtime-step';
import { type InlineStage, turnStepReading } from './turn-step';
import { ClaimingRun, type PendingClaim } from '../execution/claiming-run';
import { gatherStage } from '../execution/stage-gathering';
import { runtimeKey, type SessionJournal } from '../journal/journal';
import { keptHistory } from '../history/history-handoff';
import { runtimeJobSpan, turnJobSpan } from '../execution/trace-spans';

const done = { kind: 'done' } as const;
/** Runs of an inline runtime that races its siblings (`runInlineStep`) before the race fails the turn job's attempt. */
const INLINE_RACE_RUNS = 3;

/** What a runtime run inline goes on from: the journal its turn step left, and the claim it made there when no append carried it yet. */
type InlineRun = RuntimeStepOptions & { journal: SessionJournal };

/** Stores a pending claim alone; a claim fenced out (another came first, or the execution ended) is left. */
async function landClaim(deps: TurnDeps, job: TurnJob, pending: { journal: SessionJournal; claim: PendingClaim }): Promise<void> {
  try {
    await new ClaimingRun(deps.store, pending.journal, job, pending.claim).land();
  } catch (error) {
    if (!(error instanceof FencedOutError)) throw error;
  }
}
const handedBack = { kind: 'later', delayMs: 0 } as const;

/**
 * The queue handlers of a worker: turn jobs run `turnStep`, runtime jobs `runRuntimeStep`; this
 * class decides what a failure means for the job.
 * - a fenced-out attempt ends quietly (a newer attempt, or the end of the execution, took over);
 * - a job handed back (this process stops, `TurnDeps.stopping`) runs again later, no attempt spent;
 * - the database away: the job looks again later without spending an attempt, so an outage
 *   longer than the retries never fails a turn (nothing could be recorded anyway);
 * - a failure retrying cannot fix (`isPermanentFailure`), or the last attempt of one it could:
 *   `execution.failed` is recorded (a runtime job only while its attempt is current) and the
 *   session handed off. A runtime job then completes, so its turn job wakes, reads that the
 *   execution failed and ends; a turn job's permanent failure is thrown again (no retry).
 * - any other failure is thrown: the queue retries that job alone, with backoff.
 * Each job runs in a log scope (`withLogScope`): every line logged while it runs carries its
 * tenant, session, execution, attempt and runtime ids (and the call id once a model call is sent).
 *
 * A stage runs inline, in the turn job's run, instead of as child jobs (one per runtime): no add, no
 * move to waiting-children, no second queue hop and no second run of the turn job (each hop costs
 * some six Redis commands on BullMQ), and no read of the log per runtime. Its runtimes run at once
 * (`runStage`) and go on from the journal the turn step read and appended with, sharing it: their
 * appends are made one after another in this process, each at the version the one before left, so
 * siblings never contend for the stream's lock. When an append ends the execution (the output that
 * commits the turn) the run ends with it. Each runs as its runtime job would (`runtime`: the same
 * span, log scope, fencing and failure handling), with the turn job's attempts: a failure to retry
 * fails the turn job's attempt once every sibling has ended (retried with backoff, its claim kept
 * with the job, so the retry runs the same execution attempt and reuses every output and reply
 * recorded), `later` delays the turn job, a permanent failure or the last attempt records
 * `execution.failed`. A runtime racing its siblings' plugin-data or history writes is run again at
 * once (`runInlineStep`). A worker that dies mid-stage leaves the turn job to the stalled-job check,
 * and the next run finds the claim kept and the outputs recorded: exactly one output per runtime and
 * one commit, as with runtime jobs. Runtimes started early (`startChildren`: windowed agents before
 * the compaction barrier) run as child jobs and are waited for once the rest of their stage is done.
 */
export class TurnRunner implements QueueHandlers {
  constructor(readonly deps: TurnDeps) {}

  /** Upper bound of committed messages read for a runtime's history (the audit uses the same). */
  get historyReadLimit(): number {
    return historyReadLimit(this.deps);
  }

  turn(job: TurnJob, ctx: TurnJobContext): Promise<TurnStep> {
    const inline: string[] = [];
    return turnJobSpan(job, ctx, () => withLogScope({ job: 'turn', ...jobLogFields(job, ctx.claimedAttempt) }, () => this.runTurn(job, ctx, inline)), inline);
  }

  runtime(job: RuntimeJob, attempt: JobAttempt): Promise<JobOutcome> {
    return this.runtimeOn(job, attempt);
  }

  /** A runtime job's run; inline (`journal`: the turn job's), it goes on from the journal its turn step left. */
  private runtimeOn(job: RuntimeJob, attempt: JobAttempt, inline?: InlineRun): Promise<JobOutcome> {
    return runtimeJobSpan(job, attempt, () => withLogScope({ job: 'runtime', ...jobLogFields(job) }, () => this.runRuntime(job, attempt, inline)));
  }

  /** Turn steps, each stage run inline between two of them (see the class comment). */
  private async runTurn(job: TurnJob, ctx: TurnJobContext, inlined: string[]): Promise<TurnStep> {
    const started = new Set<string>();
    const context: TurnJobContext = {
      get attemptsMade() {
        return ctx.attemptsMade;
      },
      get maxAttempts() {
        return ctx.maxAttempts;
      },
      get claimedAttempt() {
        return ctx.claimedAttempt;
      },
      ...(ctx.claimant !== undefined ? { claimant: ctx.claimant } : {}),
      recordClaim: (attempt) => ctx.recordClaim(attempt),
      startChildren: async (children) => {
        for (const child of children) started.add(runtimeJobId(child));
        await ctx.startChildren(children);
      },
    };
    // the runtimes of a stage run inline, but those started early, as child jobs (windowed agents before the barrier): waited for as children once the others are done
    const inlineOf = (children: readonly RuntimeJob[]) => children.filter((child) => !started.has(runtimeJobId(child)));
    const runsInline = (children: readonly RuntimeJob[]) => inlineOf(children).length > 0;
    // what the next step goes on from: the journal and history the stage before left (`InlineStage.from`)
    let from: InlineStage['from'];
    for (;;) {
      const stage: InlineStage = { runs: runsInline, ...(from ? { from } : {}) };
      const { step, journal } = await this.turnStep(job, context, stage);
      if (step.kind !== 'awaitChildren' || !runsInline(step.children)) return step;
      const children = inlineOf(step.children);
      for (const child of children) inlined.push(`${child.pluginId}/${child.runtimeId}`); // the run's span lists them (turnJobSpan)
      const inline = journal && this.inlineRun(job, journal, stage);
      const outcome = await this.runStage(job, ctx, children, inline);
      if (outcome.kind === 'later') return outcome;
      // a runtime's append ended the execution (the output that completed the turn: committed, and
      // handed off there, as every end is by whoever appends it): nothing is left for a step to do,
      // no read of the log to find it out. Else the next step goes on from the journal the stage's
      // appends kept current, with no read of the log (issue 33), unless the history moved (a
      // worker dying anywhere leaves the job to the stalled-job check, whose run reads the log afresh).
      const execution = journal?.get(job.executionId);
      if (execution !== undefined && execution.status !== 'pending') return done;
      // only when every runtime of the stage recorded its output on that journal (else, as before, a read: a
      // failure recorded or an output appended by another run is in the log, not in this journal)
      const produced = execution !== undefined && children.every((c) => execution.outputs.has(runtimeKey(c.pluginId, c.runtimeId)));
      from = journal && produced && inline?.history ? { journal, history: inline.history } : undefined;
    }
  }

  /**
   * What the runtimes of a stage run inline go on from: the step's journal, its pending claim, and
   * the history view the step read (or the barrier, when it compacted: kept at the journal's version).
   */
  private inlineRun(job: TurnJob, journal: SessionJournal, stage: InlineStage): InlineRun {
    const kept = keptHistory({ tenantId: job.tenantId, sessionId: job.sessionId, executionId: job.executionId, streamVersion: journal.version });
    const history =
      stage.history?.historyVersion === journal.historyVersion ? stage.history : kept ? { history: kept, historyVersion: journal.historyVersion } : undefined;
    return { journal, ...(stage.pending ? { claim: stage.pending.claim } : {}), ...(history ? { history } : {}) };
  }

  /**
   * The runtimes of one stage, run inline at once (see the class comment), each as its runtime job
   * would: its own span (a child of this run's), log scope, fencing and failure handling. They go on
   * from the journal the step read and share it (and the attempt's claim, which the first of their
   * appends to store events carries): their appends are made one after another in this process,
   * each at the version the one before left (`ExecutionRun`), never contending for the stream's lock.
   * Every runtime runs to its end even when a sibling fails (what it records is kept); then a
   * failure to retry fails the turn job's attempt, whose retry reuses every output recorded and
   * runs only the runtimes that lack one (from their last recorded step); `later` from any delays
   * the job; a permanent failure, or any failure on the last attempt, recorded `execution.failed`
   * (the siblings' next appends are fenced out).
   */
  private async runStage(job: TurnJob, ctx: TurnJobContext, children: readonly RuntimeJob[], inline: InlineRun | undefined): Promise<JobOutcome> {
    // the runtime's span is a child of this run's, as a runtime job's is of the run that added it
    const jobs = children.map((child) => withTraceCarrier(child));
    // their first appends (their first model calls, or outputs) go as one append of the store, not the first alone
    const gathering = inline && gatherStage(inline.journal, jobs);
    // the execution's end, watched once for the stage's runtimes (each would watch it alone; one that
    // fails to be made leaves each to make its own, as before)
    const watch = inline && jobs.length > 1 ? await watchEnd(this.deps, jobs[0]).catch(() => undefined) : undefined;
    const run = inline && watch ? { ...inline, watch } : inline;
    const settled = await Promise.allSettled(jobs.map((job) => this.runtimeOn(job, ctx, run).finally(() => gathering?.left(job)))).finally(() => {
      watch?.release();
      gathering?.end();
    });
    const failed = settled.flatMap((result, i) => (result.status === 'rejected' ? [{ child: children[i], error: result.reason as unknown }] : []));
    for (const { child, error } of failed) {
      // the queue logs the turn job's failed attempt; this line names the runtime, as a runtime job's would
      this.deps.logger.warn('inline runtime failed, its turn job will retry', { ...jobLogFields(child), err: error });
    }
    if (failed.length > 0) throw failed[0].error;
    const later = settled.find((result): result is PromiseFulfilledResult<JobOutcome> => result.status === 'fulfilled' && result.value.kind === 'later');
    return later ? later.value : done;
  }

  private async turnStep(job: TurnJob, ctx: TurnJobContext, stage: InlineStage): Promise<{ step: TurnStep; journal?: SessionJournal }> {
    try {
      const read = await turnStepReading(this.deps, job, ctx, stage);
      this.deps.logger.debug?.(`turn step: ${read.step.kind}`, { step: read.step.kind });
      return read;
    } catch (error) {
      const outcome = await this.onFailure(job, ctx, error, undefined, stage.pending);
      // recorded: the queue fails the job at once (BullMQ: UnrecoverableError), no retry
      if (outcome.kind === 'done' && isPermanentFailure(error)) throw error;
      return { step: outcome };
    }
  }

  private async runRuntime(job: RuntimeJob, attempt: JobAttempt, inline: InlineRun | undefined): Promise<JobOutcome> {
    try {
      const result = inline ? await this.runInlineStep(job, inline) : await runRuntimeStep(this.deps, job, {});
      this.deps.logger.debug?.(`runtime step: ${result}`, { result });
      return done;
    } catch (error) {
      // a permanent failure is recorded there: the runtime job itself completes
      return await this.onFailure(job, attempt, error, job.attempt, inline?.claim ? { journal: inline.journal, claim: inline.claim } : undefined);
    }
  }

  /**
   * A runtime run inline. A race with what its siblings record meanwhile (plugin data written after
   * its `io.selfData` read, the history changed after its read: `PluginDataRaceError`,
   * `HistoryRaceError`, nothing sent) runs it again at once from the shared journal, which holds
   * what came, as a retry of its runtime job would (its recorded steps are kept), instead of failing
   * the turn job's attempt and with it every sibling's wait for the backoff.
   */
  private async runInlineStep(job: RuntimeJob, inline: InlineRun): Promise<RuntimeStepResult> {
    for (let race = 0; ; race++) {
      try {
        return await runRuntimeStep(this.deps, job, inline);
      } catch (error) {
        if (!(error instanceof PluginDataRaceError || error instanceof HistoryRaceError) || race + 1 >= INLINE_RACE_RUNS) throw error;
        this.deps.logger.debug?.('inline runtime raced a sibling, running it again', { code: error.code });
      }
    }
  }

  /**
   * Resolves to the job's outcome, or throws for the queue to retry the job. `pending`: a claim of
   * this run no append carried yet, stored before the failure is (a retry of the job claims afresh).
   */
  private async onFailure(
    job: TurnJob,
    attempt: JobAttempt,
    error: unknown,
    fence: number | undefined,
    pending?: { journal: SessionJournal; claim: PendingClaim },
  ): Promise<JobOutcome> {
    // this process is stopping: the job runs again (elsewhere, or at the next start), no attempt spent
    if (error instanceof JobHandedBackError) return handedBack;
    if (error instanceof FencedOutError) return done;
    if (isDatabaseUnavailable(error)) return this.databaseAway(job);
    const permanent = isPermanentFailure(error);
    if (!permanent && attempt.attemptsMade + 1 < attempt.maxAttempts) throw error;
    try {
      // the attempt the failure is recorded for is stored first (unless another claim came first: then that one's)
      if (pending && !pending.claim.landed) await landClaim(this.deps, job, pending);
      // logs the failed turn's one line once `execution.failed` is recorded
      await recordFailure(this.deps, job, { error, attempt: fence, ...(permanent ? {} : { jobAttempts: attempt.maxAttempts }) });
    } catch (recording) {
      if (isDatabaseUnavailable(recording)) return this.databaseAway(job);
      throw recording;
    }
    return done;
  }

  private databaseAway(job: TurnJob): JobOutcome {
    this.deps.logger.warn(`execution ${job.executionId}: the database cannot be reached; retrying in ${DATABASE_RETRY_MS} ms`);
    return { kind: 'later', delayMs: DATABASE_RETRY_MS };
  }
}
