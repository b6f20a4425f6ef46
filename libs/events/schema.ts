import type { ColumnType, Generated } from 'kysely';

/** Kysely table types for the event log and its projections (see migrations/). */
export interface EventsTable {
  global_position: Generated<string>;
  tenant_id: string;
  stream_id: string;
  stream_version: number;
  type: string;
  data: ColumnType<unknown, string, never>;
  metadata: ColumnType<unknown, string, never>;
  recorded_at: ColumnType<Date, string | undefined, never>;
  /** The appending transaction's id (xid8, read as a decimal string): the log's read order with global_position. */
  transaction_id: ColumnType<string, never, never>;
  /** 0..LOG_PARTITIONS-1, a hash of stream_id (generated). */
  log_partition: ColumnType<number, never, never>;
}

export interface TenantsTable {
  id: string;
  name: string;
  /** Before migration 0024 the tenant's one key (plain SHA-256); now null: keys are in `api_keys`. */
  api_key_hash: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: ColumnType<Date, string | undefined, never>;
}

/** A tenant's API key (migration 0024): a keyed hash of it, never the key. */
export interface ApiKeysTable {
  id: string;
  tenant_id: string;
  name: string;
  scopes: ColumnType<string[], string[], string[]>;
  /** `hmac-sha256` (with the pepper), or `sha256` for a key migrated from `tenants.api_key_hash`. */
  hash_kind: 'hmac-sha256' | 'sha256';
  key_hash: string;
  /** The key's first characters (`cvl_` and 4 more): a hint to tell keys apart, not a secret. */
  prefix: string;
  created_at: ColumnType<Date, string | undefined, never>;
  last_used_at: ColumnType<Date | null, string | null | undefined, Date | string | null>;
  revoked_at: ColumnType<Date | null, string | null | undefined, Date | string | null>;
}

/** The pepper generated once when `COVEL_KEY_PEPPER` is not set (migration 0024): one row. */
export interface KeyPepperTable {
  id: number;
  pepper: string;
}

export interface ProjectionCheckpointsTable {
  name: string;
  position: string;
}

export interface ProjectionFailuresTable {
  projection: string;
  stream_id: string;
  tenant_id: string;
  global_position: string;
  event_type: string;
  error: string;
  attempts: number;
  first_seen_at: ColumnType<Date, Date | string | undefined, Date | string>;
  last_seen_at: ColumnType<Date, Date | string | undefined, Date | string>;
  next_retry_at: ColumnType<Date, Date | string, Date | string>;
}

/** An async projection's place in one log partition, its owner, and the event it is stopped at (migration 0009). */
export interface ProjectionShardsTable {
  projection: string;
  shard: number;
  /** xid8 as a decimal string. */
  transaction_id: ColumnType<string, string | undefined, string>;
  global_position: ColumnType<string, string | undefined, string>;
  owner: string | null;
  lease_until: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  failing_since: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  attempts: ColumnType<number, number | undefined, number>;
  last_error: string | null;
  error_code: string | null;
  failed_position: ColumnType<string | null, string | null | undefined, string | null>;
  failed_event_type: string | null;
  next_retry_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

/** An event an async projection skipped after failing to apply it N times (migration 0022). */
export interface ProjectionQuarantineTable {
  id: ColumnType<string, never, never>;
  projection: string;
  shard: number;
  global_position: ColumnType<string, string, string>;
  /** xid8 as a decimal string. */
  transaction_id: ColumnType<string, string, string>;
  event_type: string;
  tenant_id: string;
  stream_id: string;
  error_code: string;
  error: string;
  attempts: number;
  quarantined_at: ColumnType<Date, Date | string | undefined, Date | string>;
  acknowledged_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  acknowledged_by: string | null;
  resolved_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface ExecutionsTable {
  execution_id: string;
  tenant_id: string;
  session_id: string;
  turn_id: string;
  status: 'queued' | 'running' | 'committed' | 'failed' | 'cancelled';
  attempts: number;
  worker_id: string | null;
  submitted_version: number;
  error_code: string | null;
  error_message: string | null;
  submitted_at: Date;
  updated_at: Date;
  /** What a suspended runtime waits for (JSON text of `execution.suspended@1` waitingFor); null: nothing. */
  waiting_for: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface TurnMessagesTable {
  message_id: string;
  tenant_id: string;
  session_id: string;
  turn_id: string;
  execution_id: string;
  ord: number;
  role: string;
  source_type: string;
  plugin_id: string | null;
  runtime_id: string | null;
  output_kind: string | null;
  text: string;
  compacted: boolean;
  committed_at: Date;
  /** The player-visible message of a generated asset (migration 0013): `{ mediaId, modality, mimeType, byteLength, sha256 }`. */
  media: ColumnType<unknown, string | null | undefined, string | null>;
}

export interface TraceEventsTable {
  global_position: string;
  tenant_id: string;
  session_id: string;
  execution_id: string;
  turn_id: string;
  type: string;
  call_id: string;
  plugin_id: string;
  runtime_id: string;
  data: ColumnType<unknown, string, string>;
  recorded_at: Date;
}

export interface SummariesTable {
  summary_id: string;
  tenant_id: string;
  session_id: string;
  seq: number;
  content: string;
  message_ids: ColumnType<string[], string, string>;
  truncated: boolean;
  created_at: Date;
}

export interface HistoryWatermarksTable {
  session_id: string;
  tenant_id: string;
  compacted_through: number;
  /** Committed turns of the session (migration 0014): distinct turn ids of its messages. */
  turns: Generated<number>;
}

export interface PrefixReportsTable {
  call_id: string;
  tenant_id: string;
  session_id: string;
  turn_id: string;
  turn: number;
  runtime: string;
  position: string;
  first_in_turn: boolean;
  protocol: string;
  body: string;
  layout: ColumnType<unknown, string | null, string | null>;
  request_tokens: number;
  shared_tokens: number | null;
  shared_percent: number | null;
  first_difference: ColumnType<unknown, string | null, string | null>;
  provider_cached_tokens: number | null;
  provider_input_tokens: number | null;
  /** The call's model (migration 0016; null only where the log had no llm.calling for it). */
  model: string | null;
  provider_output_tokens: number | null;
}

/** A plugin's row in one session (migration 0012): value as jsonb, positions are stream versions. */
export interface PluginDataTable {
  tenant_id: string;
  session_id: string;
  plugin_id: string;
  namespace: string;
  key: string;
  value: ColumnType<unknown, string, string>;
  created_position: number;
  updated_position: number;
}

/** Rows in each plugin namespace of a session (migration 0012), kept with plugin_data. */
export interface PluginDataNamespacesTable {
  tenant_id: string;
  session_id: string;
  plugin_id: string;
  namespace: string;
  row_count: number;
}

/** Generated media of the PostgreSQL driver of the MediaStore (migration 0013). */
export interface MediaTable {
  tenant_id: string;
  session_id: string;
  media_id: string;
  mime_type: string;
  /** `{ caption?, prompt? }` as JSON text. */
  meta: string;
  bytes: Uint8Array;
  created_at: ColumnType<Date, Date | undefined, never>;
}

/** A tenant's world as it now is (migration 0017): inline, from the world's stream. */
export interface WorldsTable {
  world_id: string;
  tenant_id: string;
  name: string;
  revision: number;
  archived: boolean;
  document: ColumnType<unknown, string, string>;
  provenance: ColumnType<unknown, string, string>;
  /** The global position of `world.created@1` (bigint, read as a decimal string): the list's order. */
  created_position: ColumnType<string, string, never>;
  created_at: ColumnType<Date, string, never>;
  updated_at: ColumnType<Date, string, string>;
}

/**
 * A world generation job as it now stands (migration 0018): inline, from the job's stream
 * (`world-generation.*`; the stream id is the job id).
 */
export interface WorldGenerationsTable {
  job_id: string;
  tenant_id: string;
  /** queued, drafting, repairing, done, failed. */
  status: string;
  /** The round of the last call recorded (0: the draft). */
  round: number;
  /** The most repair rounds the job may take. */
  rounds: number;
  world_id: string | null;
  error_code: string | null;
  error_reason: string | null;
  created_at: ColumnType<Date, string, never>;
  updated_at: ColumnType<Date, string, string>;
}

/** Answered model calls summed per tenant, UTC day, stream, model and runtime (migration 0025; the `usage` async projection). */
export interface UsageDailyTable {
  tenant_id: string;
  /** `YYYY-MM-DD` (UTC) of the answer. */
  day: ColumnType<string, string, never>;
  /** The session's id, or a world generation job's. */
  stream_id: string;
  /** Null: not a session's call (world generation). */
  session_id: string | null;
  model: string;
  runtime: string;
  calls: number;
  input_tokens: ColumnType<string, number, number>;
  cached_input_tokens: ColumnType<string, number, number>;
  output_tokens: ColumnType<string, number, number>;
}

/** Each model call the `usage` projection saw recorded (migration 0025): what its answer counts under, and whether it was counted. */
export interface UsageCallsTable {
  stream_id: string;
  call_id: string;
  tenant_id: string;
  model: string;
  runtime: string;
  answered: boolean;
}

/** A tenant's limits as they now are (migration 0026): inline, from `tenant.limits-changed@1` in `tenant:<tenantId>`. */
export interface TenantLimitsTable {
  stream_id: string;
  tenant_id: string;
  /** `TenantLimits` (event-types.ts) as JSON. */
  limits: ColumnType<unknown, string, string>;
  changed_by: string;
  /** The tenant stream's version of the event that set them. */
  version: number;
  updated_at: ColumnType<Date, string, string>;
}

/**
 * Each stream's count of inline rebuilds (migration 0029): bumped by `rebuildInline` under the
 * stream's lock; a one-statement append checks it did not move between its snapshot and its lock.
 */
export interface InlineRebuildsTable {
  stream_id: string;
  tenant_id: string;
  epoch: ColumnType<string, number | string, number | string>;
}

export interface Database {
  events: EventsTable;
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  key_pepper: KeyPepperTable;
  projection_checkpoints: ProjectionCheckpointsTable;
  projection_failures: ProjectionFailuresTable;
  projection_shards: ProjectionShardsTable;
  projection_quarantine: ProjectionQuarantineTable;
  executions: ExecutionsTable;
  turn_messages: TurnMessagesTable;
  trace_events: TraceEventsTable;
  summaries: SummariesTable;
  history_watermarks: HistoryWatermarksTable;
  prefix_reports: PrefixReportsTable;
  plugin_data: PluginDataTable;
  plugin_data_namespaces: PluginDataNamespacesTable;
  media: MediaTable;
  worlds: WorldsTable;
  world_generations: WorldGenerationsTable;
  usage_daily: UsageDailyTable;
  usage_calls: UsageCallsTable;
  tenant_limits: TenantLimitsTable;
  inline_rebuilds: InlineRebuildsTable;
}
