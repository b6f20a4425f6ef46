import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import {
  type AsyncProjector,
  EventStore,
  ExecutionWaiter,
  type MediaStore,
  InheritedMedia,
  mediaStoreFor,
  type OpenDatabase,
  openDatabase,
  PluginDataStore,
  prepareSchema,
  ReadModels,
  SessionAppends,
  TenantLimitsReads,
  TenantStore,
  upgradeInline,
  WorldGenerationReads,
  WorldReads,
} from '../events';
import { createAsyncProjector, engineInlineProjections } from './startup/projections';
import type { LoadedPlugin } from '../plugins-sdk';
import { endpointFor, hasRealKey, loadLlmConfig, PriceTable, ProviderRegistry } from '../providers';
import type { ProviderEmulator } from '../emulator';
import { startOfflineEmulator } from './startup/offline-emulator';
import { configWarnings, type EngineConfig } from './config/config';
import { BullMqTurnQueue, type FairnessOptions, InProcessQueue, type TurnQueue } from './queue';
import type { RuntimeCatalog } from './catalog/runtime-catalog';
import { CatalogGenerations } from './catalog/catalog-generations';
import { loadCatalog, type PluginReload, reloadPlugins } from './catalog/plugin-reload';
import { type Logger, type StructuredLogger, structured } from './logging/logger';
import { createLogger, jobLogFields } from './logging';
import { SessionService } from './session/session-service';
import { ActivationService } from './activations/activations';
import { ResumeService } from './session/resume';
import { CancelService } from './session/cancel';
import { TurnAlternativesService } from './session/turn-alternatives';
import { SessionBranchService } from './session/session-branch';
import { MessageEditService } from './session/message-edit';
import { TurnRevertService } from './session/turn-revert';
import { Sweeper } from './turn/sweeper';
import { TurnRunner } from './turn';
import { WorldCatalog } from './catalog/world-catalog';
import { WorldService } from './worlds/world-service';
import { resolveSessionPlugins } from './session/session-plugins';
import { checkSlotLimits } from './budget';
import { type DeltaBus, InProcessDeltaBus, RedisDeltaBus } from './live';
import { EngineMetrics, installIoCounters } from './metrics';
import { InProcessProviderHealth, type ProviderHealth, RedisProviderHealth } from './provider-health';
import { engineSharedPrompts, WorldCreation } from './world-creation';
import { SessionHistoryUse } from './history-use';
import { WorldGenerationRunner, WorldGenerationService } from './world-generation';
import { UsageStore } from '../usage';
import { MemoryRateLimiter, RedisRateLimiter, TenantLimitsService, type UsageTotalsReader } from './limits';

/** How long a found API key is answered from memory: a key revoked on another API process is refused within it (issue 32: under 1 s). */
export const TENANT_CACHE_MS = 500;

export type EngineRole = 'api' | 'worker' | 'all';

export interface Engine {
  config: EngineConfig;
  database: OpenDatabase;
  store: EventStore;
  /**
   * The async projections (trace_events, prefix_reports, usage). Roles `worker` and `all` run it
   * (WorkerLifecycle starts and stops it); the API only reads its status and waits on it.
   */
  projector: AsyncProjector;
  readModels: ReadModels;
  tenants: TenantStore;
  /** Tenant limits (request rate, executions in flight, spend budget): settings recorded in the tenant's stream. */
  limits: TenantLimitsService;
  /** Generated media's bytes (`ctx.assets`): files under the data directory embedded, the `media` table on PostgreSQL. */
  media: MediaStore;
  queue: TurnQueue;
  /** Story text as it streams from the model: in-process embedded, Redis pub/sub with REDIS_URL (see libs/engine/live). */
  deltas: DeltaBus;
  /** Wakes the readers of a session's log at each append (one LISTEN connection, opened at the first subscription): the event streams. */
  appends: SessionAppends;
  sessions: SessionService;
  /** Manual and event-triggered activations of runtimes (each its own execution). */
  activations: ActivationService;
  /** Resumes of executions a runtime suspended (`POST /v1/executions/:id/resume`). */
  resumes: ResumeService;
  /** Stopping an execution (`POST /v1/executions/:id/cancel`): its model call aborted, the session's next input taken at once. */
  cancels: CancelService;
  /** Regenerating the latest turn and selecting among its alternatives (issue 16). */
  alternatives: TurnAlternativesService;
  /** Branching a session at a turn of its history (`POST /v1/sessions/:id/branch`). */
  branches: SessionBranchService;
  /** Undo: reverting a turn and every later one (`turn.reverted@1`, issue 30). */
  reverts: TurnRevertService;
  /** Editing a committed player input or story text (`message.edited@1`, issue 30), optionally regenerating the latest turn. */
  edits: MessageEditService;
  /** The queue handlers of turn and runtime jobs; present for roles that run turns. */
  turns: TurnRunner | null;
  sweeper: Sweeper | null;
  /** The current plugin catalog (registry generation). */
  catalog: RuntimeCatalog;
  /** Every registry generation held for running executions (the current one included). */
  generations: CatalogGenerations;
  /** Reads the plugin folders again: the next executions use them, running ones keep theirs (SIGHUP). */
  reloadPlugins(): Promise<PluginReload>;
  /** A tenant's worlds (the log) and the deployment's built-in file worlds (`config.worldsDir`, read-only). */
  worlds: WorldService;
  /** Each session's use of the history limit (`config.historyMessageLimit`): `ok`, `warning` from 80 %, `full` past it. */
  historyUse: SessionHistoryUse;
  /** World creation's requests from the shared templates (spec §6): the loader over `config.promptsDir`, checked at start-up. */
  worldCreation: WorldCreation;
  /** World creation from a description (`POST /v1/worlds/generate`): requests recorded and enqueued, progress, audit; never a model call. */
  worldGeneration: WorldGenerationService;
  /** The queue handler of world generation jobs; present for roles that run jobs. */
  worldGenerationRunner: WorldGenerationRunner | null;
  providers: ProviderRegistry;
  /** Which model slots missed a call deadline lately (`/health`'s `providers`). */
  providerHealth: ProviderHealth;
  /** List prices per model (built in, `llm.toml` [prices] over them): the est. $ of the inspector's views and /metrics. */
  prices: PriceTable;
  /** Usage metering: the `usage` async projection's sums of answered model calls per tenant and UTC day, priced at `prices` when read. */
  usage: UsageStore;
  emulator: ProviderEmulator | null;
  workerId: string;
  /** The given logger, or the one of `config.log` (pino: JSON or readable lines, redacted). */
  logger: StructuredLogger;
  /** This engine's Prometheus registry and its families (`GET /metrics`, a worker's `COVEL_METRICS_PORT`). */
  metrics: EngineMetrics;
  /**
   * Stops the sweeper and the projector, stops taking jobs and waits for the running ones (with
   * `graceMs`: that long, then their model calls are aborted and the jobs handed back, see
   * `TurnQueue.close`), then closes the rest: the delta bus, the emulator, the database (and the
   * data directory's lock).
   */
  close(options?: EngineCloseOptions): Promise<void>;
}

export interface EngineCloseOptions {
  /** How long running jobs may take to end; absent: as long as they take. */
  graceMs?: number;
}

/** What a caller may give the composition root instead of what the config points at. */
export interface EngineOverrides {
  /** These plugins (already loaded, ids unique) instead of the folders under `config.pluginsDir` (the plugin contract-test harness). */
  plugins?: readonly LoadedPlugin[];
  /** The usage totals tenant budgets are checked against (default: the usage projection, `usage`). */
  usage?: UsageTotalsReader;
}

/** The composition root shared by the API, the worker, the embedded default and the plugin contract-test harness. */
export async function createEngine(config: EngineConfig, role: EngineRole, given?: Logger, overrides: EngineOverrides = {}): Promise<Engine> {
  const logger = structured(given ?? createLogger(config.log));
  // covel_redis_commands_total, covel_http_requests_total: hooked once per process, before any client is made
  installIoCounters();
  // before anything opens: a prompt root without the shared templates stops start-up, naming the paths tried
  const worldCreation = new WorldCreation({ prompts: engineSharedPrompts(config.promptsDir) });
  const database = await openDatabase(config.database);
  const closers: (() => Promise<void>)[] = [() => database.close()];
  try {
    const schema = await prepareSchema(database, config.database);
    for (const warning of [...schema.warnings, ...configWarnings(config)]) logger.warn(warning);
    // once, after the upgrade that made them inline: rows the old runner had not caught up on
    const upgraded = await upgradeInline({ db: database.db, projections: engineInlineProjections });
    if (upgraded) {
      logger.log(`inline read models brought up to date: ${upgraded.streams} stream(s), ${upgraded.events} event(s)`);
      for (const f of upgraded.failures) logger.error(`inline read models of stream ${f.streamId} not rebuilt: ${String(f.error)}`);
    }
    const llm = loadLlmConfig(config.llmConfigFile);
    checkSlotLimits(llm, config.llmConfigFile); // spec §5: invalid token limits stop start-up, naming the slot's field
    const prices = new PriceTable(llm.prices);
    const metrics = new EngineMetrics(logger, { prices });
    closers.unshift(() => metrics.settled()); // the timelines being read, before the database closes
    const store = new EventStore(database.db, { inline: engineInlineProjections, onAppended: metrics.onAppended });
    const readModels = new ReadModels(database.db);
    // the embedded default on disk keeps media as files beside its database; PostgreSQL (and an in-memory PGlite) in a table
    // a branch reads the media of the messages it inherited from the session that generated them
    const media = new InheritedMedia(
      mediaStoreFor(database, { filesDir: config.database.kind === 'pglite' && config.database.dataDir ? config.dataDir : undefined }),
      async (sessionId) => (await store.readStream(sessionId, 0, 1))[0],
    );
    const usage = new UsageStore({ db: database.db, prices });
    const limits = new TenantLimitsService({
      store,
      reads: new TenantLimitsReads(database.db),
      defaults: config.limits,
      rate: config.redisUrl ? new RedisRateLimiter({ redisUrl: config.redisUrl, prefix: config.queuePrefix, logger }) : new MemoryRateLimiter(),
      // the budget reads the usage projection (async: a call counts once the projector has applied it)
      usage: overrides.usage ?? usage,
    });
    closers.unshift(() => limits.close());
    const workerId = config.worker.id ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    // fair scheduling across tenants; the per-tenant caps are the tenants' limits (`maxInFlight`)
    const fairness: FairnessOptions = {
      tenantCaps: limits,
      ...(config.scheduler.window === null ? {} : { window: config.scheduler.window }),
      ...(config.scheduler.tenantMaxInFlight === null ? {} : { tenantMaxInFlight: config.scheduler.tenantMaxInFlight }),
    };
    const queue: TurnQueue = config.redisUrl
      ? new BullMqTurnQueue({
          redisUrl: config.redisUrl,
          prefix: config.queuePrefix,
          logger,
          consumer: {
            concurrency: config.worker.concurrency,
            lockDurationMs: config.worker.lockDurationMs,
            stalledIntervalMs: config.worker.stalledIntervalMs,
            name: workerId,
          },
          onJobStarted: metrics.jobStarted,
          fairness,
        })
      : new InProcessQueue({
          fairness,
          concurrency: config.worker.concurrency,
          onError: (e, { kind, willRetry, job }) =>
            logger.warn(`${kind} job failed${willRetry ? ', will retry' : ' for good'}`, { ...jobLogFields(job), err: e }),
          onJobStarted: metrics.jobStarted,
        });
    // a stop past its grace period aborts the running model calls: their jobs are handed back (TurnDeps.stopping)
    const stopping = new AbortController();
    let closeOptions: EngineCloseOptions = {};
    closers.unshift(() =>
      queue.close({
        ...(closeOptions.graceMs === undefined ? {} : { graceMs: closeOptions.graceMs }),
        onGraceOver: () => {
          logger.warn(
            `stopping: jobs still running after ${closeOptions.graceMs} ms (COVEL_SHUTDOWN_GRACE_MS); their model calls are aborted and the jobs handed back`,
          );
          stopping.abort();
        },
      }),
    );
    const deltas: DeltaBus = config.redisUrl ? new RedisDeltaBus({ redisUrl: config.redisUrl, prefix: config.queuePrefix, logger }) : new InProcessDeltaBus();
    // after the queue has drained: the jobs running meanwhile still stream their text to the readers
    closers.splice(1, 0, () => deltas.close());
    const appends = new SessionAppends({ listen: (channel, onNotify, options) => database.listen(channel, onNotify, options), logger });
    // after the API (its streams end first), before the database
    closers.splice(closers.length - 1, 0, () => appends.close());
    const files = new WorldCatalog(config.worldsDir);
    files.loadAll(); // a bad world file stops start-up, naming the file and the field path
    const worlds = new WorldService({ store, reads: new WorldReads(database.db, store), files });
    const worldGenerations = new WorldGenerationReads(database.db);
    // a new session's world (its revision, its plugins, its opening): the catalog is loaded below (a session is created only after start-up)
    const sessions = new SessionService({
      store,
      queue,
      readModels,
      logger,
      worlds,
      plugins: ({ world, requested }) => resolveSessionPlugins({ catalog: generations.current, world, ...(requested ? { requested } : {}) }),
    });
    // woken by the appends it has to project (the events table's NOTIFY, on this process's one LISTEN connection), not by polling
    const projector = createAsyncProjector(database.db, {
      owner: workerId,
      logger,
      quarantineAfter: config.projector.quarantineAfter,
      idleDelayMs: config.projector.idleDelayMs,
      appends,
    });
    closers.unshift(() => projector.stop()); // a no-op unless it ran (WorkerLifecycle stops it first)
    metrics.attach({ db: database.db, queueDepth: () => queue.depth(), projections: () => projector.status() });

    let turns: TurnRunner | null = null;
    let worldGenerationRunner: WorldGenerationRunner | null = null;
    let sweeper: Sweeper | null = null;
    let emulator: ProviderEmulator | null = null;
    const catalog = await loadCatalog(config, overrides.plugins, logger);
    const generations = new CatalogGenerations(catalog);
    const activations = new ActivationService({ store, queue, readModels, catalog: () => generations.current, logger });
    const resumes = new ResumeService({ store, readModels, queue, logger });
    const alternatives = new TurnAlternativesService({ store, queue, readModels, logger });
    if (role !== 'api') {
      const needsEmulator = Object.values(llm.slots).some((s) => !hasRealKey(s.protocol, config.env));
      if (needsEmulator && !config.env.COVEL_EMULATOR_URL) {
        // loaded only now (a dynamic import); the worlds' reply books let the emulated model make
        // meaningful bookkeeping calls (worlds/<id>/emulator-replies.json)
        emulator = await startOfflineEmulator({ settings: config.emulator, worlds: files });
        const started = emulator;
        // after the queue has drained (its running jobs may be calling the emulator), before the database
        closers.splice(closers.length - 1, 0, () => started.stop());
      }
    }
    // the API process only builds requests (audit), never sends them: any root will do there
    const emulatorRoot = emulator?.url ?? (role === 'api' ? 'http://127.0.0.1:9' : null);
    // which slots missed a call deadline lately (`/health`): workers write it, the API reads it
    const providerHealth: ProviderHealth = config.redisUrl
      ? new RedisProviderHealth({ redisUrl: config.redisUrl, prefix: config.queuePrefix, logger })
      : new InProcessProviderHealth();
    closers.unshift(() => providerHealth.close());
    const providers = new ProviderRegistry(llm, (protocol) => endpointFor(protocol, config.env, emulatorRoot), providerHealth.listener);
    if (role !== 'api') {
      // the worker hears of the end of an execution it runs (a cancel): its model call is aborted at once
      const ends = new ExecutionWaiter({
        listen: (channel, onNotify, options) => database.listen(channel, onNotify, options),
        read: (tenantId, executionId) => readModels.execution(tenantId, executionId),
        logger,
      });
      closers.splice(closers.length - 1, 0, () => ends.close());
      turns = new TurnRunner({
        store,
        readModels,
        pluginData: new PluginDataStore(database.db),
        media,
        catalog,
        generations,
        providers,
        worlds,
        logger,
        queue,
        deltas,
        metrics,
        ends,
        stopping: stopping.signal,
        options: { workerId, historyReadLimit: config.historyMessageLimit, turnDeadlineMs: config.worker.turnDeadlineMs },
      });
      worldGenerationRunner = new WorldGenerationRunner({ store, worlds, providers, creation: worldCreation, logger, metrics });
      sweeper = new Sweeper({ readModels, worldGenerations, queue, logger, options: config.sweep });
      const started = sweeper;
      closers.unshift(() => started.stop());
    }
    return {
      config,
      database,
      store,
      projector,
      readModels,
      // every API request looks its key up: remembered for half a second per process (a revoke reaches every process within it)
      // and a key read brings its tenant's limits along (the request's rate limit then reads nothing)
      tenants: new TenantStore(database.db, {
        cacheMs: TENANT_CACHE_MS,
        pepper: config.keyPepper,
        store,
        onLimitsRead: (tenantId, recorded) => limits.remember(tenantId, recorded),
      }),
      limits,
      media,
      queue,
      deltas,
      appends,
      sessions,
      activations,
      resumes,
      branches: new SessionBranchService({ store, readModels }),
      cancels: new CancelService({ store, readModels, queue, logger, deltas, generations }),
      alternatives,
      reverts: new TurnRevertService({ store, readModels }),
      edits: new MessageEditService({ store, readModels, alternatives }),
      turns,
      sweeper,
      get catalog() {
        return generations.current;
      },
      generations,
      reloadPlugins: () => reloadPlugins({ config, generations, turnDeps: turns?.deps ?? null, logger }),
      worlds,
      historyUse: new SessionHistoryUse({ readModels, catalog: () => generations.current, limit: config.historyMessageLimit }),
      worldCreation,
      worldGeneration: new WorldGenerationService({
        store,
        reads: worldGenerations,
        queue,
        creation: worldCreation,
        providers,
        pluginIds: () => new Set(generations.current.plugins.map((p) => p.manifest.id)),
        settings: config.worldGeneration,
        logger,
      }),
      worldGenerationRunner,
      providers,
      providerHealth,
      prices,
      usage,
      emulator,
      workerId,
      logger,
      metrics,
      async close(options = {}) {
        closeOptions = options;
        for (const close of closers) await close().catch((e) => logger.warn(`while closing: ${String(e)}`));
      },
    };
  } catch (error) {
    for (const close of closers) await close().catch(() => undefined);
    throw error;
  }
}
