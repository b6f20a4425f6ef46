export { createEngine, consoleLogger } from './engine';
export type { Engine, EngineRole } from './engine';
export { loadConfig, ConfigError } from './config';
export type { EngineConfig } from './config';
export { SessionService } from './session-service';
export type { Logger } from './session-service';
export { TurnExecutor, DEFAULT_HISTORY_READ_LIMIT } from './turn-executor';
export { SessionJournal } from './journal';
export { loadRuntimeHistory } from './history-loader';
export type { LoadedHistory } from './history-loader';
export { buildRuntimeRequest } from './runtime-request';
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
export { BullMqTurnQueue, redisConnection } from './bullmq-queue';
export { TURN_QUEUE_NAME, TURN_JOB_ATTEMPTS, turnJobId } from './queue';
export type { TurnJob, TurnQueue, JobOutcome, JobAttempt, TurnJobHandler } from './queue';
export { Sweeper } from './sweeper';
export { WorldCatalog, WorldNotFoundError, worldLorebook } from './world-catalog';
export { LORE_SCAN_LIMIT } from './history-loader';
export { createProjectionRunner, engineProjections } from './projections';
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
