import { randomUUID } from 'node:crypto';
import { type CommittedMessage, ConcurrencyError, type EventStore, isDatabaseUnavailable, type NewEvent, type ReadModels } from '../events';
import { type LoadedWorld, type Locale, promptLocaleOf } from '../plugins-sdk';
import { type ProviderRegistry, redactImageData } from '../providers';
import { EngineError } from '../errors';
import { ExecutionNotFoundError, FencedOutError, isPermanentFailure } from './errors';
import { type ExecutionJournal, executionOutputs, type RuntimeOutput, runtimeKey, SessionJournal } from './journal';
import type { JobAttempt, JobOutcome, TurnJob } from './queue';
import type { CatalogRuntime, RuntimeCatalog } from './runtime-catalog';
import { type LoadedHistory, loadRuntimeHistory } from './history-loader';
import { buildRuntimeRequest, requestLayout } from './runtime-request';
import { staticSegments } from './static-segments';
import type { WorldCatalog } from './world-catalog';
import type { Logger } from './logger';

/** Upper bound of committed messages read for a runtime's history. */
export const DEFAULT_HISTORY_READ_LIMIT = 400;

/** How soon a turn interrupted by a database outage is tried again. */
const DATABASE_RETRY_MS = 2_000;

export interface TurnExecutorOptions {
  workerId: string;
  /** How long a job waits before looking again when an earlier input of its session is pending. */
  waitForEarlierMs?: number;
  /** Upper bound of committed messages read for a runtime's history. */
  historyReadLimit?: number;
}

/** Holds the fencing token (attempt) and the journal of one running execution. */
class ExecutionRun {
  private appendChain: Promise<unknown> = Promise.resolve();
  constructor(
    readonly tenantId: string,
    readonly sessionId: string,
    readonly execution: ExecutionJournal,
    readonly journal: SessionJournal,
    readonly attempt: number,
    readonly locale: Locale,
    readonly world: LoadedWorld | null,
    private readonly store: EventStore,
  ) {}

  /**
   * Appends at the journal's version after checking that this attempt is still the current one;
   * a concurrent append (another input of the session) is read into the journal and the append
   * is tried again. Appends of one run are serialized.
   */
  append(build: () => NewEvent[]): Promise<number> {
    const next = this.appendChain.then(() => this.appendNow(build));
    this.appendChain = next.catch(() => undefined);
    return next;
  }

  private async appendNow(build: () => NewEvent[]): Promise<number> {
    for (let tries = 0; ; tries++) {
      this.checkFence();
      try {
        const r = await this.store.append({ tenantId: this.tenantId, streamId: this.sessionId, expectedVersion: this.journal.version, events: build() });
        this.journal.apply(await this.store.readStream(this.sessionId, this.journal.version));
        return r.version;
      } catch (error) {
        if (!(error instanceof ConcurrencyError) || tries >= 100) throw error;
        this.journal.apply(await this.store.readStream(this.sessionId, this.journal.version));
      }
    }
  }

  private checkFence() {
    const current = this.journal.get(this.execution.executionId);
    if (!current || current.status !== 'pending' || current.latestAttempt !== this.attempt) {
      throw new FencedOutError(this.execution.executionId, this.attempt);
    }
  }
}

/**
 * Runs one turn job: rebuilds the session's execution journal from events, runs the stages
 * (a barrier between stages, runtimes of one stage in parallel), and commits the turn once.
 */
export class TurnExecutor {
  constructor(
    private readonly store: EventStore,
    private readonly readModels: ReadModels,
    private readonly catalog: RuntimeCatalog,
    private readonly providers: ProviderRegistry,
    private readonly worlds: WorldCatalog,
    private readonly logger: Logger,
    private readonly options: TurnExecutorOptions,
  ) {}

  /** Upper bound of committed messages read for a runtime's history (the audit uses the same). */
  get historyReadLimit(): number {
    return this.options.historyReadLimit ?? DEFAULT_HISTORY_READ_LIMIT;
  }

  /**
   * Runs the job. A failure retrying cannot fix (`isPermanentFailure`: invalid, not found, a
   * non-retryable provider answer) is recorded as `execution.failed` when the execution exists and
   * is thrown again, so the queue fails the job at once instead of retrying it. The last attempt of
   * a retryable failure is recorded too and the job ends.
   */
  async handle(job: TurnJob, attempt: JobAttempt): Promise<JobOutcome> {
    try {
      return await this.run(job);
    } catch (error) {
      if (error instanceof FencedOutError) return { kind: 'done' };
      // the database is away: nothing can be recorded (not even a failure); look again later
      // without spending an attempt, so an outage longer than the retries never fails a turn
      if (isDatabaseUnavailable(error)) {
        this.logger.warn(`execution ${job.executionId}: the database cannot be reached; retrying in ${DATABASE_RETRY_MS} ms`);
        return { kind: 'later', delayMs: DATABASE_RETRY_MS };
      }
      if (isPermanentFailure(error)) {
        await this.fail(job, attempt.attemptsMade + 1, error);
        throw error;
      }
      if (attempt.attemptsMade + 1 >= attempt.maxAttempts) {
        await this.fail(job, attempt.attemptsMade + 1, error);
        return { kind: 'done' };
      }
      throw error;
    }
  }

  private async run(job: TurnJob): Promise<JobOutcome> {
    const journal = await this.loadJournal(job.sessionId);
    const execution = journal.get(job.executionId);
    if (!execution) {
      // the journal starts at the earliest pending input: a finished execution is not in it
      const finished = await this.readModels.execution(job.tenantId, job.executionId);
      if (finished?.status === 'committed' || finished?.status === 'failed') return { kind: 'done' };
      throw new ExecutionNotFoundError(job.executionId, job.sessionId);
    }
    if (execution.status !== 'pending') return { kind: 'done' };
    // one session runs one execution at a time, in submission order
    if (journal.pending()[0].executionId !== execution.executionId) {
      return { kind: 'later', delayMs: this.options.waitForEarlierMs ?? 200 };
    }
    const { locale, worldId } = await this.sessionSettings(job.sessionId);
    const world = worldId && this.worlds.has(worldId) ? this.worlds.get(worldId) : null;
    const attempt = execution.latestAttempt + 1;
    // claim: execution.started with the next attempt number, appended at the version just read
    try {
      await this.store.append({
        tenantId: job.tenantId,
        streamId: job.sessionId,
        expectedVersion: journal.version,
        events: [
          { type: 'execution.started@1', data: { executionId: execution.executionId, turnId: execution.turnId, attempt, workerId: this.options.workerId } },
        ],
      });
    } catch (error) {
      if (error instanceof ConcurrencyError) return { kind: 'later', delayMs: 0 }; // the session moved on: look again
      throw error;
    }
    journal.apply(await this.store.readStream(job.sessionId, journal.version));
    const run = new ExecutionRun(job.tenantId, job.sessionId, journal.get(execution.executionId)!, journal, attempt, locale, world, this.store);
    const history = await loadRuntimeHistory(this.readModels, job.tenantId, job.sessionId, this.historyReadLimit);
    for (const group of this.catalog.groups()) {
      await Promise.all(group.runtimes.map((runtime) => this.runRuntime(run, runtime, history)));
    }
    await this.commit(run);
    return { kind: 'done' };
  }

  private async loadJournal(sessionId: string): Promise<SessionJournal> {
    const from = await this.readModels.earliestPendingVersion(sessionId);
    const after = from === null ? 0 : from - 1;
    return new SessionJournal(await this.store.readStream(sessionId, after), after);
  }

  private async sessionSettings(sessionId: string): Promise<{ locale: Locale; worldId: string | null }> {
    const [first] = await this.store.readStream(sessionId, 0, 1);
    return first?.type === 'session.created@1' ? { locale: promptLocaleOf(first.data.locale), worldId: first.data.worldId } : { locale: 'en', worldId: null };
  }

  private async runRuntime(run: ExecutionRun, runtime: CatalogRuntime, history: LoadedHistory): Promise<void> {
    const key = runtimeKey(runtime.pluginId, runtime.manifest.id);
    if (run.execution.outputs.has(key)) return; // produced by an earlier attempt: reuse, don't call again
    const m = runtime.manifest;
    const { body, slot, adapter, context } = await buildRuntimeRequest(
      {
        sessionId: run.sessionId,
        locale: run.locale,
        runtime,
        stageIndex: this.catalog.stageIndex(runtime),
        history: history.messages,
        summaries: history.summaries,
        playerInput: run.execution.input,
        outputs: executionOutputs(run.execution, this.catalog),
        segments: staticSegments(this.catalog.plugins, run.locale),
        world: run.world,
        scanTail: history.scanTail,
      },
      this.providers,
    );
    const callId = randomUUID();
    const ids = { executionId: run.execution.executionId, turnId: run.execution.turnId, callId, pluginId: runtime.pluginId, runtimeId: m.id };
    await run.append(() => [
      {
        type: 'llm.calling@1',
        data: {
          ...ids,
          attempt: run.attempt,
          provider: adapter.protocol,
          model: slot.model,
          body: JSON.stringify(redactImageData(body)),
          layout: requestLayout(context),
        },
      },
    ]);
    const response = await adapter.send(body);
    await run.append(() => [
      { type: 'llm.responded@1', data: { ...ids, finishReason: response.finishReason, usage: response.usage } },
      {
        type: 'runtime.output.produced@1',
        data: {
          executionId: ids.executionId,
          turnId: ids.turnId,
          attempt: run.attempt,
          stage: m.stage,
          pluginId: runtime.pluginId,
          runtimeId: m.id,
          outputKind: m.outputKind,
          messageId: randomUUID(),
          text: response.text,
        },
      },
    ]);
  }

  private async commit(run: ExecutionRun): Promise<void> {
    const outputs = this.orderedOutputs(run.execution);
    const messages: CommittedMessage[] = [
      {
        messageId: run.execution.input.messageId,
        role: 'user',
        sourceType: 'player',
        pluginId: null,
        runtimeId: null,
        outputKind: null,
        text: run.execution.input.text,
      },
      ...outputs.map((o) => ({
        messageId: o.messageId,
        role: 'assistant' as const,
        sourceType: 'runtime' as const,
        pluginId: o.pluginId,
        runtimeId: o.runtimeId,
        outputKind: o.outputKind,
        text: o.text,
      })),
    ];
    await run.append(() => [
      { type: 'turn.committed@1', data: { executionId: run.execution.executionId, turnId: run.execution.turnId, attempt: run.attempt, messages } },
    ]);
  }

  /** Outputs in catalog order (stage order, then plugin and runtime order). */
  private orderedOutputs(execution: ExecutionJournal): RuntimeOutput[] {
    return this.catalog
      .groups()
      .flatMap((g) => g.runtimes)
      .map((r) => execution.outputs.get(runtimeKey(r.pluginId, r.manifest.id)))
      .filter((o): o is RuntimeOutput => o !== undefined && o.outputKind !== 'none');
  }

  private async fail(job: TurnJob, attempt: number, error: unknown) {
    this.logger.error(`execution ${job.executionId} failed after ${attempt} attempts: ${String(error)}`);
    for (let tries = 0; tries < 20; tries++) {
      const journal = await this.loadJournal(job.sessionId);
      const execution = journal.get(job.executionId);
      if (!execution || execution.status !== 'pending') return;
      try {
        await this.store.append({
          tenantId: job.tenantId,
          streamId: job.sessionId,
          expectedVersion: journal.version,
          events: [
            {
              type: 'execution.failed@1',
              data: {
                executionId: job.executionId,
                turnId: execution.turnId,
                attempt,
                error: { code: errorCode(error), message: error instanceof Error ? error.message : String(error) },
              },
            },
          ],
        });
        return;
      } catch (e) {
        if (!(e instanceof ConcurrencyError)) throw e;
      }
    }
  }
}

function errorCode(error: unknown): string {
  if (error instanceof EngineError) return error.code;
  return error instanceof Error ? error.name : 'UNKNOWN';
}
