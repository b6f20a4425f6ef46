import type { EventStore, ExecutionWaiter, MediaStore, PluginDataStore, ReadModels } from '../../events';
import type { ProviderRegistry } from '../../providers';
import type { Logger } from '../logging/logger';
import type { TurnProducer } from '../queue';
import type { RuntimeCatalog } from '../catalog/runtime-catalog';
import type { WorldLoader } from '../catalog/world-catalog';
import type { CatalogGenerations } from '../catalog/catalog-generations';
import type { ToolSet } from '../tools';
import type { DeltaBus } from '../live';
import type { EngineMetrics } from '../metrics';
import { DEFAULT_HISTORY_MESSAGE_LIMIT } from '../config';

/**
 * Safety bound of the shared history view (spec §1 step 1: every uncompacted message; compaction
 * keeps it far smaller). A session with more uncompacted messages fails its turn with
 * `HistoryTooLongError` instead of losing its oldest messages silently; the engine's is
 * `COVEL_HISTORY_MESSAGE_LIMIT` (this default), and sessions report their use of it (history-use).
 */
export const DEFAULT_HISTORY_READ_LIMIT = DEFAULT_HISTORY_MESSAGE_LIMIT;

/** How soon a job interrupted by a database outage is tried again (no attempt spent). */
export const DATABASE_RETRY_MS = 2_000;

export interface TurnOptions {
  /** Recorded in `execution.started` by the claims of this process. */
  workerId: string;
  /** Safety bound of uncompacted messages read for a runtime's history (the audit uses the same). */
  historyReadLimit?: number;
  /** A turn's deadline, from its first start or latest resume (`COVEL_TURN_DEADLINE_MS`); default `DEFAULT_TURN_DEADLINE_MS`. */
  turnDeadlineMs?: number;
}

/** What every step of a turn works with. */
export interface TurnDeps {
  store: EventStore;
  readModels: ReadModels;
  /** Plugin data reads (`ctx.pluginData`, `io.selfData`), scoped per tenant, session and plugin. */
  pluginData: PluginDataStore;
  /** The current plugin catalog (new executions capture its generation). */
  catalog: RuntimeCatalog;
  /** Earlier generations, for executions that started before a reload (`executionCatalog`). */
  generations?: CatalogGenerations;
  providers: ProviderRegistry;
  worlds: WorldLoader;
  logger: Logger;
  /** The tools of agent runtimes; absent (as production wires it): `createToolSet` over `pluginData` (framework and plugin tools). */
  tools?: ToolSet;
  /**
   * Where generated media's bytes are stored (`ctx.assets`) and read for the recent-images message.
   * Absent (a test's deps): a run that generates an asset fails, and no image is attached.
   */
  media?: MediaStore;
  /** Where streamed story text goes as it arrives (`GET /v1/sessions/:id/events`); absent: nowhere. */
  deltas?: DeltaBus;
  /** Model call timings and errors (`covel_model_call_*`); absent (a test's deps): not measured. */
  metrics?: EngineMetrics;
  /**
   * Hears when an execution ends elsewhere (a cancel, another job's failure): a runtime job watches
   * its execution while it runs and aborts its model call then. Absent (a test's deps): never aborted.
   */
  ends?: Pick<ExecutionWaiter, 'watch'>;
  /**
   * Aborted when this process stops and its grace period is over: a running runtime job aborts its
   * model call and hands its job back (`JobHandedBackError`), recording nothing. Absent: never.
   */
  stopping?: AbortSignal;
  /** Where the hand-off enqueues a session's next execution. */
  queue: TurnProducer;
  options: TurnOptions;
}

export const historyReadLimit = (deps: Pick<TurnDeps, 'options'>) => deps.options.historyReadLimit ?? DEFAULT_HISTORY_READ_LIMIT;
