export { createEngine } from './engine';
export { consoleLogger } from './logger';
export type { Engine, EngineRole } from './engine';
export { loadConfig, ConfigError } from './config';
export { apiKeyWeakness, estimatedKeyBits, MIN_API_KEY_BITS, MIN_API_KEY_LENGTH } from './api-key-strength';
export type { EngineConfig } from './config';
export { SessionService } from './session-service';
export type { Logger } from './logger';
export type { CreateSessionRequest, SubmitInputRequest, SessionServiceDeps } from './session-service';
export { IDEMPOTENCY_KEY_HEADER, IdempotencyKeyMismatchError, requestHash } from './idempotency';
export type { IdempotentAnswer, IdempotentOperation } from './idempotency';
export { TurnExecutor, DEFAULT_HISTORY_READ_LIMIT } from './turn-executor';
export { SessionJournal } from './journal';
export { loadRuntimeHistory } from './history-loader';
export type { LoadedHistory } from './history-loader';
export { buildRuntimeRequest, requestMessages } from './runtime-request';
export type { RuntimeRequestInputs, RuntimeRequest } from './runtime-request';
export { rebuildRequests } from './request-rebuild';
export { auditTurn, TurnNotFoundError } from './turn-audit';
export type { TurnAudit } from './turn-audit';
export type { RebuiltCall, SectionSource } from './request-rebuild';
export { staticSegments } from './static-segments';
export { attachRecentImages, IMAGE_LIMITS } from './picture-attachments';
export type { MediaStore } from './picture-attachments';
export { InProcessQueue } from './in-process-queue';
export type { InProcessQueueOptions } from './in-process-queue';
export { BullMqTurnQueue, redisConnection, ENQUEUE_TIMEOUT_MS } from './bullmq-queue';
export { TURN_QUEUE_NAME, TURN_JOB_ATTEMPTS, turnJobId, QUEUE_RETRY_AFTER_SECONDS } from './queue';
export type { TurnJob, TurnQueue, QueueHealth, JobOutcome, JobAttempt, TurnJobHandler } from './queue';
export { Sweeper } from './sweeper';
export { WorldCatalog, WorldNotFoundError, worldLorebook } from './world-catalog';
export { LORE_SCAN_LIMIT } from './history-loader';
export { ASYNC_PROJECTIONS, createAsyncProjector, engineInlineProjections } from './projections';
export { RuntimeCatalog, DEFAULT_STAGES } from './runtime-catalog';
export {
  SessionNotFoundError,
  FencedOutError,
  ExecutionNotFoundError,
  JournalGapError,
  UnknownStageError,
  RecordedCallWithoutExecutionError,
  RuntimeNotInCatalogError,
  isPermanentFailure,
} from './errors';
