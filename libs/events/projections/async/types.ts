import type { Kysely } from 'kysely';
import type { LogCursor } from '../../event-store';
import type { Database } from '../../schema';
import type { Projection } from '../projection';
import type { QuarantinedEvent } from './quarantine';

export interface ProjectorLogger {
  log(message: string): void;
  warn(message: string): void;
}

/** A source of "events were appended" wakes: resolves (once listening) to the subscription's end. */
export interface AppendWakes {
  subscribeAll(onAppend: () => void): Promise<() => void>;
}

export interface AsyncProjectorOptions {
  db: Kysely<Database>;
  /** The async projections this projector runs (each has a row per log partition in `projection_shards`). */
  projections: readonly Projection[];
  /** Who works the shards it takes: the worker id (a replay uses `replay:<pid>`). */
  owner: string;
  /** One line per failing shard (once per failure), recovery, and a loop that cannot reach the database. Default: the console. */
  logger?: ProjectorLogger;
  /** How long a shard stays with its owner without a renewal. Default 20 s. */
  leaseMs?: number;
  /**
   * Tells the background loop that events were appended (`SessionAppends.subscribeAll`: the events
   * table's NOTIFY). With it the loop sleeps until an append (or `safetyNetMs`); without it, it
   * polls every `idleDelayMs`.
   */
  appends?: AppendWakes;
  /**
   * Pause of the background loop before a pass without a backlog: events gather meanwhile, so each
   * shard transaction carries many (fewer round trips per event). With `appends`, the pause between
   * a notification and its pass (the appends of a burst share one pass); without, the poll interval.
   * Default `DEFAULT_PROJECTION_IDLE_DELAY_MS` (200 ms).
   */
  idleDelayMs?: number;
  /**
   * With `appends`: the longest sleep without a notification (leases renewed, dead owners' shards
   * taken, a missed notification caught up). At most a quarter of `leaseMs`, so a lease is renewed
   * (at half its length) well before it runs out. Default 5 s.
   */
  safetyNetMs?: number;
  /** Events read per batch. Default 500. */
  batchSize?: number;
  /** First retry delay of a failing shard; doubles with each failed retry. Default 1 s. */
  retryDelayMs?: number;
  /** Upper bound of the retry delay. Default 5 minutes. */
  maxRetryDelayMs?: number;
  /** Batches one pass applies to a shard before it moves to the next one. Default 10. */
  batchesPerShard?: number;
  /**
   * Failed attempts at one event (the first one included) after which the shard skips it: the event
   * is recorded in `projection_quarantine` (error, tenant, stream), the shard goes on. Default 5.
   */
  quarantineAfter?: number;
}

/** The event a shard is stopped at. `error` may hold tenant data (operators only); `errorCode` does not. */
export interface ShardFailure {
  globalPosition: number;
  eventType: string;
  /** SQLSTATE, engine error code, or the error's class name. */
  errorCode: string;
  error: string;
  /** Tries so far, the first one included. */
  attempts: number;
  /** ISO 8601. */
  since: string;
  nextRetryAt: string | null;
}

export interface ShardStatus {
  shard: number;
  /** The last event applied (LOG_START: none). */
  cursor: LogCursor;
  owner: string | null;
  /** ISO 8601, or null when nobody holds it. */
  leaseUntil: string | null;
  /** Events of this partition after the cursor, counted up to `LAG_COUNT_LIMIT`. */
  lag: number;
  state: 'running' | 'failing';
  failure: ShardFailure | null;
}

export interface AsyncProjectionStatus {
  name: string;
  state: 'running' | 'failing';
  /** Sum of the shards' lag (each counted up to `LAG_COUNT_LIMIT`). */
  lag: number;
  /** Number of failing shards. */
  failing: number;
  shards: ShardStatus[];
  /** Its newest quarantined events neither acknowledged nor resolved, at most `QUARANTINE_STATUS_LIMIT` (they keep `/health` degraded). */
  quarantined: QuarantinedEvent[];
  /** How many of its quarantined events are open (neither acknowledged nor resolved), all of them counted. */
  quarantinedOpen: number;
  /** Events it ever quarantined (acknowledged and resolved ones included). */
  quarantinedTotal: number;
}

export interface WaitForRequest {
  projection: string;
  streamId: string;
  /** The event to wait for; default: the stream's last event. */
  globalPosition?: number;
  timeoutMs: number;
  /** How often the shard's row is read. Default 25 ms. */
  pollMs?: number;
}

/** Expected outcomes, as values: only a database error throws. */
export type WaitResult =
  | { status: 'reached' }
  /** The shard is stopped at an event before the one waited for (see status()). */
  | { status: 'stopped'; shard: number }
  | { status: 'timed-out'; shard: number };

export interface ReplayProgress {
  projection: string;
  shard: number;
  /** Events of this shard read so far in this replay. */
  read: number;
  cursor: LogCursor;
  done: boolean;
}

export interface ReplayOptions {
  /** One projection; default: every projection of this projector. */
  projection?: string;
  onProgress?: (progress: ReplayProgress) => void;
}

export interface ReplayedProjection {
  name: string;
  /** Events read from the log (each handled one applied once). */
  read: number;
  /** Quarantined events whose records this replay resolved (they applied this time). */
  resolved: number;
  /** The projection's quarantined events still unresolved after the replay (skipped: its views miss them). */
  quarantined: QuarantinedEvent[];
}

export interface ReplayResult {
  projections: ReplayedProjection[];
}
