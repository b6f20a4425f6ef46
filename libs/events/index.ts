export * from './event-types';
export * from './errors';
export type { Database } from './schema';
export {
  EventStore,
  validateEvent,
  IDEMPOTENCY_KEY_FIELD,
  IDEMPOTENCY_REQUEST_HASH_FIELD,
  LOG_PARTITIONS,
  LOG_START,
  READ_AFTER_EACH,
  readAfterQuery,
  readStreamQuery,
  streamHeadQuery,
} from './event-store';
export type {
  AppendRequest,
  AppendResult,
  CatchingUpAppendRequest,
  CatchingUpAppendResult,
  EventStoreOptions,
  IdempotencyRecord,
  IdempotentAppend,
  LogEntry,
  LogCursor,
  OrderedLogEntry,
  ReadAfterOptions,
} from './event-store';
export { precompiled } from './precompiled';
export { OMITTED_CALL_BODY } from './turn-read';
export { StreamContention, CONTENTION_MEMORY_MS } from './stream-contention';
export { pgCounts, statementLabel, transactionEffect, BoundedTally, MAX_STATEMENT_LABELS } from './pg-counts';
export type { PgCountsSnapshot } from './pg-counts';
export { openDatabase, migrateToLatest, MigrationError, DATABASE_CONNECT_TIMEOUT_MS } from './database';
export type { DatabaseConfig, OpenDatabase, Listening, ListenOptions } from './database';
export { databaseUnavailable, isDatabaseUnavailable, DATABASE_RETRY_AFTER_SECONDS } from './unavailable';
export { probeDatabase, withinMs, DATABASE_PROBE_TIMEOUT_MS } from './health';
export type { DatabaseProbe } from './health';
export { prepareSchema, migrateAsOwner } from './schema-setup';
export type { SchemaSetupResult } from './schema-setup';
export {
  schemaStatus,
  connectionRole,
  missingAppPrivileges,
  grantAppRole,
  SchemaNotCurrentError,
  AppRolePrivilegesError,
  AppRoleError,
  APP_ROLE_PATTERN,
} from './schema-access';
export type { SchemaStatus, ConnectionRole, MissingPrivilege } from './schema-access';
export { acquireDataDirLock, lockFileFor } from './data-dir-lock';
export type { DataDirLock } from './data-dir-lock';
export { AsyncProjector, DEFAULT_PROJECTION_IDLE_DELAY_MS, UnknownProjectionError } from './projections/async/async-projector';
export { REPLAY_OWNER_PREFIX } from './projections/async/claim-plan';
export { LAG_COUNT_LIMIT, QUARANTINE_STATUS_LIMIT } from './projections/async/status';
export { ReplayInterruptedError } from './projections/async/replay';
export { DEFAULT_QUARANTINE_AFTER, QUARANTINE_ID_PATTERN, QuarantineRecords } from './projections/async/quarantine';
export type { QuarantinedEvent, QuarantineFilter } from './projections/async/quarantine';
export type {
  AppendWakes,
  AsyncProjectorOptions,
  AsyncProjectionStatus,
  ProjectorLogger,
  ReplayOptions,
  ReplayProgress,
  ReplayResult,
  ReplayedProjection,
  ShardFailure,
  ShardStatus,
  WaitForRequest,
  WaitResult,
} from './projections/async/types';
export { executionsProjection } from './projections/executions';
export { turnMessagesProjection } from './projections/turn-messages';
export { summariesProjection } from './projections/summaries';
export { eventByEvent, eventsFor } from './projections/projection';
export type { Projection, EventByEventProjection, InlineProjection, StreamKey, StreamKeyedTable } from './projections/projection';
export { inlineProjections, asyncProjections } from './projections/sets';
export { type TraceColumns, traceEventsProjection, traceInsertQuery } from './projections/trace-events';
export { pendingSuffixQuery } from './pending-suffix-query';
export { rebuildInline, upgradeInline } from './projections/inline/rebuild-inline';
export type { RebuildInlineOptions, RebuildInlineProgress, RebuildInlineFailure, RebuildInlineResult } from './projections/inline/rebuild-inline';
export { TenantStore, ApiKeyExistsError, ApiKeyNotFoundError, TenantNotFoundError, LastAdminKeyError } from './tenants';
export type { Tenant, TenantStoreOptions, Caller, AdminActor } from './tenants';
export { newApiKey, hmacApiKey, sha256ApiKey, loadKeyPepper, KEY_PREFIX_LENGTH } from './api-keys';
export type { ApiKeyView, AuthenticatedKey } from './api-keys';
export { TenantLimitsReads } from './tenant-limits';
export type { RecordedTenantLimits } from './tenant-limits';
export { tenantLimitsProjection } from './projections/tenant-limits';
export { ReadModels, historyViewJson, historyViewOf } from './read-models';
export type { BranchOriginView, SessionBranchView } from './session-branches';
export { WorldReads } from './world-reads';
export type { WorldRow, WorldListRow, WorldRevision } from './world-reads';
export { worldsProjection } from './projections/worlds';
export { worldGenerationsProjection } from './projections/world-generations';
export { WorldGenerationReads } from './world-generation-reads';
export type { WorldGenerationRow, WorldGenerationStatus } from './world-generation-reads';
export { ExecutionWaiter, EXECUTION_ENDED_CHANNEL, MAX_EXECUTION_WAIT_MS, hasEnded } from './execution-waiter';
export type { ExecutionWaiterOptions, ExecutionWait, ExecutionWatch, ListenState, SubmitMark } from './execution-waiter';
export { SessionAppends, SESSION_APPENDED_CHANNEL } from './session-appends';
export type { SessionAppendsOptions } from './session-appends';
export type {
  ExecutionView,
  TurnMessageView,
  LlmCallView,
  SummaryView,
  RecordedCallView,
  PrefixReportView,
  HistoryStats,
  HistoryView,
  HistoryViewLimits,
  SessionSummaryView,
  SessionModelUsageView,
} from './read-models';
export { pluginDataProjection } from './projections/plugin-data';
export { PluginDataStore, selfDataQuery } from './plugin-data-store';
export type { PluginDataReader } from './plugin-data-store';
export { PluginDataFold } from './plugin-data-fold';
export {
  PluginDataSnapshot,
  readSessionPluginData,
  sessionPluginDataJson,
  sessionPluginDataOf,
  sessionPluginDataQuery,
  SESSION_PLUGIN_DATA_BOUNDS,
} from './plugin-data-snapshot';
export type { SessionPluginDataBounds } from './plugin-data-snapshot';
export { storyEvents, changesPath, branchRead, PATH_EVENT_TYPES } from './story-path';
export { readStoryLog, readInheritedStory, STORY_EVENT_TYPES } from './story-log';
export { DEFAULT_SELF_DATA_LIMIT, MAX_SELF_DATA_LIMIT, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, selfDataSplit } from './plugin-data-view';
export type { JsonValue, PluginDataScope, PluginDataRow, SelfDataView } from './plugin-data-view';
export { mediaStoreFor, FileMediaStore, TableMediaStore, InvalidMediaError, MEDIA_ID_PATTERN, MIME_TYPE_PATTERN, InheritedMedia } from './media';
export type { MediaStore, MediaRef, MediaMeta, NewMedia, StoredMedia } from './media';
export type { TurnAlternativeRecord, TurnAlternativesRecord } from './turn-alternatives';
export type { HistoryMessageRecord, RevertedRecord, RevertScope } from './steering-reads';
