import type { Kysely } from 'kysely';
import { Counter, Gauge, Histogram, Registry } from './prom-client';
import type { AppendResult, AsyncProjectionStatus, Database, StoredEvent } from '../../events';
import { estimateCostUsd, type PriceTable, type ProviderAdapter, type TokenUsage } from '../../providers';
import { BoundedMemo } from '../../memo';
import type { Logger } from '../logging/logger';
import { registerIoCounters } from './io-counts';
import { StreamTails } from './stream-tails';
import { readTimeline, type TimelineEvent, turnTimeline } from './turn-timeline';

/** What the queue port reports on a scrape: jobs per queue and state. */
export interface QueueDepthSample {
  queue: string;
  state: string;
  jobs: number;
}

/** What the gauges read on a scrape (each optional: a process without it has no samples). */
export interface MetricsSources {
  /** Jobs per queue and state (the queue port's `depth`). */
  queueDepth?: () => Promise<readonly QueueDepthSample[]>;
  /** Every async projection's shards (`AsyncProjector.status`). */
  projections?: () => Promise<readonly AsyncProjectionStatus[]>;
  /** The database the active-tenants gauge and the turn timelines read. */
  db?: Kysely<Database>;
}

/** What an engine's metrics are built with. */
export interface EngineMetricsOptions {
  /** The list prices `covel_model_cost_usd_total` counts with (none: the counter stays empty). */
  prices?: PriceTable;
}

/** Error codes kept as label values; a code beyond them is counted as `other` (labels stay bounded). */
export const MAX_ERROR_CODES = 64;

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const MS = 1_000;

/**
 * The Prometheus metrics of one engine: one registry per engine (never prom-client's global one, so
 * several engines in one process keep their own counts). Labels are bounded: runtime ids
 * (`plugin/runtime`, bounded by the installed plugins), stage names, provider and model (the
 * llm.toml slots), queue names and states, projection names and shards, error codes (at most
 * `MAX_ERROR_CODES`). Never a session, execution or call id; the tenant id only on the cost counter
 * (tenants are created by an operator, not per request: bounded, and stable where a name is not).
 */
export class EngineMetrics {
  readonly registry = new Registry();
  private sources: MetricsSources = {};
  private readonly pending = new Set<Promise<void>>();
  /** What this process holds of sessions' logs (journal reads, its appends): a committed turn's timeline without a read. */
  private readonly tails = new StreamTails();
  private readonly errorCodes = new Set<string>();
  private statusRead: Promise<readonly AsyncProjectionStatus[] | undefined> | null = null;

  private readonly turnsCommitted = new Counter({
    name: 'covel_turns_committed_total',
    help: 'Turns committed (turn.committed), by kind: input (a player input) or activation (a runtime activated on its own)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  private readonly turnsFailed = new Counter({
    name: 'covel_turns_failed_total',
    help: 'Executions that failed for good (execution.failed), by error code',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });
  private readonly turnLatency = new Histogram({
    name: 'covel_turn_latency_seconds',
    help: 'Input recorded to turn committed, per committed turn (event recorded_at)',
    buckets: SECONDS,
    registers: [this.registry],
  });
  private readonly turnOverhead = new Histogram({
    name: 'covel_turn_engine_overhead_seconds',
    help: 'Turn latency minus the time a model call of the turn was in flight: what the engine itself spent',
    buckets: SECONDS,
    registers: [this.registry],
  });
  private readonly stageDuration = new Histogram({
    name: 'covel_stage_duration_seconds',
    help: "A committed turn's stage: previous stage's last output (or the claim) to its own last output",
    labelNames: ['stage'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });
  private readonly runtimeDuration = new Histogram({
    name: 'covel_runtime_duration_seconds',
    help: "A committed turn's runtime: its stage's start to its output recorded",
    labelNames: ['runtime', 'stage'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });
  private readonly modelLatency = new Histogram({
    name: 'covel_model_call_duration_seconds',
    help: 'One model call (an agent step, sent and answered), by provider protocol and model',
    labelNames: ['provider', 'model'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });
  private readonly modelErrors = new Counter({
    name: 'covel_model_call_errors_total',
    help: 'Model calls that failed (refused, broke, timed out), by provider protocol and model',
    labelNames: ['provider', 'model'] as const,
    registers: [this.registry],
  });
  private readonly inputTokens = new Counter({
    name: 'covel_model_input_tokens_total',
    help: 'Input tokens the provider reported (llm.responded usage, compaction summaries too), by runtime',
    labelNames: ['runtime'] as const,
    registers: [this.registry],
  });
  private readonly outputTokens = new Counter({
    name: 'covel_model_output_tokens_total',
    help: 'Output tokens the provider reported, by runtime',
    labelNames: ['runtime'] as const,
    registers: [this.registry],
  });
  private readonly cachedTokens = new Counter({
    name: 'covel_model_cached_input_tokens_total',
    help: 'Input tokens read from the provider prompt cache (part of the input tokens), by runtime',
    labelNames: ['runtime'] as const,
    registers: [this.registry],
  });
  private readonly cost = new Counter({
    name: 'covel_model_cost_usd_total',
    help: 'Estimated USD of the model calls at list prices (llm.toml [prices] over the built-in table; cached input at the cached price), compaction summaries too, by tenant id and model; calls of an unpriced model are not counted',
    labelNames: ['tenant', 'model'] as const,
    registers: [this.registry],
  });
  private readonly idempotentReplays = new Counter({
    name: 'covel_idempotent_replays_total',
    help: 'Requests answered as the replay of an earlier one with the same Idempotency-Key, by route',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });
  private readonly queueWait = new Histogram({
    name: 'covel_queue_wait_seconds',
    help: 'A job enqueued to its first start, by queue',
    labelNames: ['queue'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });

  /** callId / requestId → the runtime label and model, for the usage its answer reports (appended by the same process). */
  private readonly callRuntimes = new BoundedMemo<string, { runtime: string; model: string }>({ maxEntries: 10_000 });
  private readonly prices: PriceTable | undefined;

  constructor(
    private readonly logger?: Pick<Logger, 'warn'>,
    options: EngineMetricsOptions = {},
  ) {
    this.prices = options.prices;
    const share: Gauge<'runtime'> = new Gauge({
      name: 'covel_model_cache_read_share',
      help: 'Cached input tokens / input tokens since this process started, by runtime (the same ratio over any window: rate(cached) / rate(input))',
      labelNames: ['runtime'] as const,
      registers: [this.registry],
      collect: async () => {
        share.reset();
        const cached = new Map((await this.cachedTokens.get()).values.map((v) => [String(v.labels.runtime), v.value]));
        for (const v of (await this.inputTokens.get()).values)
          if (v.value > 0) share.set({ runtime: String(v.labels.runtime) }, (cached.get(String(v.labels.runtime)) ?? 0) / v.value);
      },
    });
    const jobs: Gauge<'queue' | 'state'> = new Gauge({
      name: 'covel_queue_jobs',
      help: 'Jobs in each queue by state (waiting, active, delayed, waiting-children, ...), read on scrape',
      labelNames: ['queue', 'state'] as const,
      registers: [this.registry],
      collect: async () => {
        jobs.reset();
        for (const s of (await this.read('queue depth', this.sources.queueDepth)) ?? []) jobs.set({ queue: s.queue, state: s.state }, s.jobs);
      },
    });
    const lag: Gauge<'projection' | 'shard'> = new Gauge({
      name: 'covel_projection_lag_events',
      help: 'Events of the log an async projection shard has not applied yet (counted up to its limit), read on scrape',
      labelNames: ['projection', 'shard'] as const,
      registers: [this.registry],
      collect: async () => {
        lag.reset();
        for (const p of (await this.projectionStatus()) ?? [])
          for (const shard of p.shards) lag.set({ projection: p.name, shard: String(shard.shard) }, shard.lag);
      },
    });
    const quarantined: Counter<'projection'> = new Counter({
      name: 'covel_projection_quarantined_events_total',
      help: 'Events an async projection skipped after failing to apply them (projection_quarantine, acknowledged and resolved ones included), read on scrape',
      labelNames: ['projection'] as const,
      registers: [this.registry],
      collect: async () => {
        quarantined.reset();
        for (const p of (await this.projectionStatus()) ?? []) quarantined.inc({ projection: p.name }, p.quarantinedTotal);
      },
    });
    const unacknowledged: Gauge<'projection'> = new Gauge({
      name: 'covel_projection_quarantined_unacknowledged',
      help: 'Quarantined events no operator has acknowledged yet (they keep /health degraded), read on scrape',
      labelNames: ['projection'] as const,
      registers: [this.registry],
      collect: async () => {
        unacknowledged.reset();
        for (const p of (await this.projectionStatus()) ?? []) unacknowledged.set({ projection: p.name }, p.quarantinedOpen);
      },
    });
    const tenants: Gauge = new Gauge({
      name: 'covel_active_tenants',
      help: 'Tenants with at least one session whose turn is queued, running or waiting now, read on scrape',
      registers: [this.registry],
      collect: async () => {
        const db = this.sources.db;
        tenants.set((db ? await this.read('active tenants', () => activeTenants(db)) : undefined) ?? 0);
      },
    });
    registerIoCounters(this.registry);
  }

  /** What the on-scrape gauges read, given once the engine has built them. */
  attach(sources: MetricsSources): void {
    this.sources = { ...this.sources, ...sources };
  }

  /** The exposition text and its content type (for `GET /metrics`). */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** Resolves once the turn timelines being read now are observed (tests; shutdown). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /** The event store's hook: counts what each committed append recorded. Never throws. */
  readonly onAppended = (result: AppendResult): void => {
    try {
      this.tails.appended(result.events);
      for (const event of result.events) this.observeEvent(event);
    } catch (error) {
      this.logger?.warn(`metrics: ${String(error)}`);
    }
  };

  /**
   * A read of a session's events this process made (a journal's: contiguous, up to the stream's
   * head as it read it): with this process's appends after it, the timeline of a turn it commits
   * comes from them, not from a read of the log. Never throws.
   */
  readonly heard = (events: readonly StoredEvent[]): void => {
    try {
      this.tails.read(events);
    } catch (error) {
      this.logger?.warn(`metrics: ${String(error)}`);
    }
  };

  /** Times one model call; an error is counted and thrown on. */
  async modelCall<T>(labels: { provider: string; model: string }, call: () => Promise<T>): Promise<T> {
    const stop = this.modelLatency.startTimer(labels);
    try {
      const result = await call();
      stop();
      return result;
    } catch (error) {
      this.modelErrors.inc(labels);
      throw error;
    }
  }

  /** A job's first start, `waitedMs` after it was enqueued. */
  readonly jobStarted = (info: { queue: string; waitedMs: number }): void => {
    this.queueWait.observe({ queue: info.queue }, Math.max(0, info.waitedMs) / MS);
  };

  /** An API answer that replayed an earlier request (`Idempotent-Replayed: true`). */
  idempotentReplay(route: string): void {
    this.idempotentReplays.inc({ route });
  }

  private observeEvent(event: StoredEvent): void {
    switch (event.type) {
      case 'turn.committed@1': {
        const kind = event.data.messages[0]?.sourceType === 'player' ? 'input' : 'activation';
        this.turnsCommitted.inc({ kind });
        this.observeTimeline(event, event.data.executionId, event.data.attempt);
        return;
      }
      case 'execution.failed@1':
        this.turnsFailed.inc({ code: this.boundedCode(event.data.error.code) });
        return;
      case 'llm.calling@1':
        this.remember(event.data.callId, `${event.data.pluginId}/${event.data.runtimeId}`, event.data.model);
        return;
      case 'llm.responded@1': {
        const call = this.callRuntimes.get(event.data.callId);
        this.callRuntimes.delete(event.data.callId);
        this.countUsage(`${event.data.pluginId}/${event.data.runtimeId}`, event.data.usage);
        this.countCost(event.tenantId, call?.model, event.data.usage);
        return;
      }
      case 'compaction.summary-requested@1':
        this.remember(event.data.requestId, `${event.data.pluginId}/(compaction)`, event.data.model);
        return;
      case 'compaction.summary-responded@1': {
        const call = this.callRuntimes.get(event.data.requestId);
        this.callRuntimes.delete(event.data.requestId);
        this.countUsage(call?.runtime ?? '(compaction)', event.data.usage);
        this.countCost(event.tenantId, call?.model, event.data.usage);
        return;
      }
      default:
        return;
    }
  }

  private countUsage(runtime: string, usage: { inputTokens: number; outputTokens: number; cachedInputTokens: number }) {
    this.inputTokens.inc({ runtime }, usage.inputTokens);
    this.outputTokens.inc({ runtime }, usage.outputTokens);
    this.cachedTokens.inc({ runtime }, usage.cachedInputTokens);
  }

  /** The call's estimated USD (a model known from its `llm.calling` in this process, and priced). */
  private countCost(tenant: string, model: string | undefined, usage: TokenUsage) {
    if (model === undefined || !this.prices) return;
    const usd = estimateCostUsd(usage, this.prices.priceOf(model));
    if (usd !== null) this.cost.inc({ tenant, model }, usd);
  }

  /** Bounded: an id whose answer never comes (a crash) is dropped with the oldest. */
  private remember(id: string, runtime: string, model: string) {
    this.callRuntimes.set(id, { runtime, model });
  }

  private boundedCode(code: string): string {
    if (this.errorCodes.has(code)) return code;
    if (this.errorCodes.size >= MAX_ERROR_CODES) return 'other';
    this.errorCodes.add(code);
    return code;
  }

  /** Latency, overhead, stage and runtime durations of a committed turn, read from its events after the append. */
  private observeTimeline(event: StoredEvent, executionId: string, attempt: number) {
    const ref = { tenantId: event.tenantId, sessionId: event.streamId, executionId, committedVersion: event.streamVersion };
    const held = this.tails.timeline(ref);
    const db = this.sources.db;
    if (!db) return;
    // the events this process read and appended, when they hold the whole execution (no statement)
    if (held) return this.observeTurn(held, attempt);
    const read = readTimeline(db, ref)
      .then((events) => this.observeTurn(events, attempt))
      .catch((error: unknown) => this.logger?.warn(`metrics: the timeline of a committed turn was not read: ${String(error)}`))
      .finally(() => this.pending.delete(read));
    this.pending.add(read);
  }

  private observeTurn(events: readonly TimelineEvent[], attempt: number) {
    const t = turnTimeline(events, attempt);
    if (!t) return;
    this.turnLatency.observe(t.latencyMs / MS);
    this.turnOverhead.observe(t.overheadMs / MS);
    for (const s of t.stages) this.stageDuration.observe({ stage: s.stage }, s.ms / MS);
    for (const r of t.runtimes) this.runtimeDuration.observe({ runtime: r.runtime, stage: r.stage }, r.ms / MS);
  }

  /** A source read on scrape: a failure leaves its gauge without samples (the scrape still answers). */
  /** The projections' status, read once for the families of one scrape (they collect at once). */
  private projectionStatus(): Promise<readonly AsyncProjectionStatus[] | undefined> {
    if (this.statusRead) return this.statusRead;
    const read = this.read('projection status', this.sources.projections).finally(() => (this.statusRead = null));
    this.statusRead = read;
    return read;
  }

  private async read<T>(what: string, source: (() => Promise<T>) | undefined): Promise<T | undefined> {
    if (!source) return undefined;
    try {
      return await source();
    } catch (error) {
      this.logger?.warn(`metrics: ${what} not read: ${String(error)}`);
      return undefined;
    }
  }
}

/**
 * The adapter with each `send` timed and its failures counted (`covel_model_call_*`, labels: the
 * adapter's protocol and `model`); the adapter itself when there are no metrics (a test's deps).
 */
export function timedAdapter(metrics: EngineMetrics | undefined, adapter: ProviderAdapter, model: string): ProviderAdapter {
  if (!metrics) return adapter;
  // every model step asks for its slot's adapter and model: the timed one is made once for them
  // (`Object.create` with a property descriptor makes a slow object each time), for as long as both are held
  let byModel = timedAdapters.get(metrics)?.get(adapter);
  if (!byModel) {
    const byAdapter = timedAdapters.get(metrics) ?? new WeakMap<ProviderAdapter, Map<string, ProviderAdapter>>();
    timedAdapters.set(metrics, byAdapter);
    byAdapter.set(adapter, (byModel = new Map()));
  }
  let timed = byModel.get(model);
  if (!timed) {
    const labels = { provider: adapter.protocol, model };
    timed = Object.create(adapter, {
      send: { value: (...args: Parameters<ProviderAdapter['send']>) => metrics.modelCall(labels, () => adapter.send(...args)) },
    }) as ProviderAdapter;
    byModel.set(model, timed);
  }
  return timed;
}

/** `timedAdapter`'s adapters, by metrics, adapter and model (a slot's model is one of a few). */
const timedAdapters = new WeakMap<EngineMetrics, WeakMap<ProviderAdapter, Map<string, ProviderAdapter>>>();

/** Tenants with an execution queued or running (a suspended one is running), through the pending-executions index. */
async function activeTenants(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('executions')
    .select((eb) => eb.fn.count<string>('tenant_id').distinct().as('n'))
    .where('status', 'in', ['queued', 'running'])
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}
