import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { type AsyncProjector, EventStore, type OpenDatabase, openDatabase, prepareSchema, ReadModels, TenantStore, upgradeInline } from '../events';
import { createAsyncProjector, engineInlineProjections } from './projections';
import { loadPlugins } from '../plugins-sdk';
import { endpointFor, hasRealKey, loadLlmConfig, ProviderRegistry } from '../providers';
import { ProviderEmulator } from '../emulator';
import { BullMqTurnQueue } from './bullmq-queue';
import type { EngineConfig } from './config';
import { InProcessQueue } from './in-process-queue';
import type { TurnQueue } from './queue';
import { RuntimeCatalog } from './runtime-catalog';
import { consoleLogger, type Logger } from './logger';
import { SessionService } from './session-service';
import { Sweeper } from './sweeper';
import { TurnExecutor } from './turn-executor';
import { WorldCatalog } from './world-catalog';

export type EngineRole = 'api' | 'worker' | 'all';

export interface Engine {
  config: EngineConfig;
  database: OpenDatabase;
  store: EventStore;
  /**
   * Transitional: the catch-up of the views a turn reads (executions, turn_messages, summaries)
   * until they are applied inline with the append; the turn executor, session service and sweeper
   * call it.
   */
  /**
   * The async projections (trace_events, prefix_reports). Roles `worker` and `all` run it
   * (WorkerLifecycle starts and stops it); the API only reads its status and waits on it.
   */
  projector: AsyncProjector;
  readModels: ReadModels;
  tenants: TenantStore;
  queue: TurnQueue;
  sessions: SessionService;
  /** Present for roles that run turns. */
  executor: TurnExecutor | null;
  sweeper: Sweeper | null;
  catalog: RuntimeCatalog;
  worlds: WorldCatalog;
  providers: ProviderRegistry;
  emulator: ProviderEmulator | null;
  workerId: string;
  logger: Logger;
  close(): Promise<void>;
}

/** The composition root shared by the API, the worker and the embedded default. */
export async function createEngine(config: EngineConfig, role: EngineRole, logger: Logger = consoleLogger): Promise<Engine> {
  const database = await openDatabase(config.database);
  const closers: (() => Promise<void>)[] = [() => database.close()];
  try {
    const schema = await prepareSchema(database, config.database);
    for (const warning of schema.warnings) logger.warn(warning);
    // once, after the upgrade that made them inline: rows the old runner had not caught up on
    const upgraded = await upgradeInline({ db: database.db, projections: engineInlineProjections });
    if (upgraded) {
      logger.log(`inline read models brought up to date: ${upgraded.streams} stream(s), ${upgraded.events} event(s)`);
      for (const f of upgraded.failures) logger.error(`inline read models of stream ${f.streamId} not rebuilt: ${String(f.error)}`);
    }
    const store = new EventStore(database.db, { inline: engineInlineProjections });
    const readModels = new ReadModels(database.db);
    const queue: TurnQueue = config.redisUrl
      ? new BullMqTurnQueue({ redisUrl: config.redisUrl, prefix: config.queuePrefix, logger })
      : new InProcessQueue({
          concurrency: config.worker.concurrency,
          onError: (e, { willRetry }) => logger.warn(`turn job failed${willRetry ? ', will retry' : ' for good'}: ${String(e)}`),
        });
    closers.unshift(() => queue.close());
    const sessions = new SessionService({ store, queue, readModels, logger });
    const workerId = config.worker.id ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    const projector = createAsyncProjector(database.db, { owner: workerId, logger });
    closers.unshift(() => projector.stop()); // a no-op unless it ran (WorkerLifecycle stops it first)

    let executor: TurnExecutor | null = null;
    let sweeper: Sweeper | null = null;
    let emulator: ProviderEmulator | null = null;
    const llm = loadLlmConfig(config.llmConfigFile);
    const catalog = new RuntimeCatalog(loadPlugins(config.pluginsDir));
    const worlds = new WorldCatalog(config.worldsDir);
    worlds.loadAll(); // a bad world file stops start-up, naming the file and the field path
    if (role !== 'api') {
      const needsEmulator = Object.values(llm.slots).some((s) => !hasRealKey(s.protocol, config.env));
      if (needsEmulator && !config.env.COVEL_EMULATOR_URL) {
        emulator = await new ProviderEmulator(config.emulator).start();
        const started = emulator;
        closers.unshift(() => started.stop());
      }
    }
    // the API process only builds requests (audit), never sends them: any root will do there
    const emulatorRoot = emulator?.url ?? (role === 'api' ? 'http://127.0.0.1:9' : null);
    const providers = new ProviderRegistry(llm, (protocol) => endpointFor(protocol, config.env, emulatorRoot));
    if (role !== 'api') {
      executor = new TurnExecutor(store, readModels, catalog, providers, worlds, logger, { workerId });
      sweeper = new Sweeper(readModels, queue, logger, config.sweep);
      const started = sweeper;
      closers.unshift(() => started.stop());
    }
    return {
      config,
      database,
      store,
      projector,
      readModels,
      tenants: new TenantStore(database.db),
      queue,
      sessions,
      executor,
      sweeper,
      catalog,
      worlds,
      providers,
      emulator,
      workerId,
      logger,
      async close() {
        for (const close of closers) await close().catch((e) => logger.warn(`while closing: ${String(e)}`));
      },
    };
  } catch (error) {
    for (const close of closers) await close().catch(() => undefined);
    throw error;
  }
}
