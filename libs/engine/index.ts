export { createEngine } from './engine';
export type { Engine, EngineRole, EngineOverrides } from './engine';
export { loadConfig, ConfigError, EngineEnv } from './config';
export { apiKeyWeakness, estimatedKeyBits, MIN_API_KEY_BITS, MIN_API_KEY_LENGTH } from './api-key-strength';
export type { EngineConfig } from './config';
export { SessionService } from './session-service';
export { NoRunningTurnError } from './mid-turn';
export type { MidTurnAnswer, MidTurnRequest } from './mid-turn';
export type { Logger, LogFields, StructuredLogger } from './logger';
export { structured } from './logger';
export { createLogger, errorFields, LOG_FORMATS, LOG_LEVELS, REDACTED, secretValues, withLogScope, addToLogScope, logScope } from './logging';
export type { CreateLoggerOptions, LogDestination, LogFormat, LogLevel, LogSettings } from './logging';
export type { CreateSessionRequest, SubmitInputRequest, SessionServiceDeps } from './session-service';
export { IDEMPOTENCY_KEY_HEADER, IdempotencyKeyMismatchError, requestHash } from './idempotency';
export type { IdempotentAnswer, IdempotentOperation } from './idempotency';
export { TurnRunner, DEFAULT_HISTORY_READ_LIMIT } from './turn';
export type { TurnDeps, TurnOptions } from './turn';
export { SessionJournal } from './journal';
export { loadRuntimeHistory } from './history-loader';
export type { LoadedHistory } from './history-loader';
export { buildRuntimeRequest, requestMessages, promptCacheKey } from './runtime-request';
export type { RuntimeRequestInputs, RuntimeRequest } from './runtime-request';
export type { RequestBudget } from './runtime-request';
export { checkSlotLimits, slotLimits, slotEstimator, ContextOverflowError } from './budget';
export { rebuildRequests } from './request-rebuild';
export { auditTurn, TurnNotFoundError } from './turn-audit';
export type { TurnAudit } from './turn-audit';
export type { RebuiltCall, SectionSource } from './request-rebuild';
export { staticSegments } from './static-segments';
export { IMAGE_LIMITS, recentImageReferences, readRecentImages, attachImages } from './picture-attachments';
export type { ImageReference, ReadImages } from './picture-attachments';
export { AssetBuffer, AssetRefusedError, MAX_ASSETS_PER_RUN } from './plugin-host/asset-buffer';
export type { GeneratedAsset } from './plugin-host/asset-buffer';
export {
  InProcessQueue,
  BullMqTurnQueue,
  redisConnection,
  deleteQueueKeys,
  ENQUEUE_TIMEOUT_MS,
  TURN_QUEUE_NAME,
  RUNTIME_QUEUE_NAME,
  TURN_JOB_ATTEMPTS,
  RUNTIME_JOB_ATTEMPTS,
  DEFAULT_RETRY_POLICY,
  turnJobId,
  runtimeJobId,
  QUEUE_RETRY_AFTER_SECONDS,
} from './queue';
export type {
  InProcessQueueOptions,
  BullMqOptions,
  BullMqConsumerOptions,
  TurnJob,
  RuntimeJob,
  TurnQueue,
  TurnProducer,
  TurnConsumer,
  QueueHandlers,
  QueueHealth,
  QueueDepth,
  JobStartedListener,
  JobOutcome,
  JobAttempt,
  TurnStep,
  TurnJobContext,
  RetryPolicy,
} from './queue';
export { InProcessDeltaBus, RedisDeltaBus, FINISHED_CALL_GRACE_MS, CALL_DELTAS_TTL_MS } from './live';
export type { DeltaBus, StoryDelta, RedisDeltaBusOptions } from './live';
export { Sweeper } from './sweeper';
export { EngineMetrics, serveMetrics, turnTimeline, unionLength } from './metrics';
export type { MetricsServer, MetricsSources, QueueDepthSample, TurnTimeline, TimelineEvent } from './metrics';
export type { SweeperDeps, SweeperOptions } from './sweeper';
export { WorldCatalog, WorldNotFoundError, worldLorebook } from './world-catalog';
export { worldReplyRules } from './offline-emulator';
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
  RuntimeNotFoundError,
  isPermanentFailure,
} from './errors';
export { PluginHost, ExtensionRegistry, loadPluginEntries, DEFAULT_HANDLER_TIMEOUT_MS, emptyPluginData, pluginSdk } from './plugin-host';
export type { PluginHostOptions, PluginDataSource, ExecutionScope } from './plugin-host';
export { LiveResolver, storePluginData } from './plugin-host';
export { readSelfData, foldedSelfData } from './self-data';
export type { ExtensionResolver, RequestPlugins } from './plugin-host';
export type { CatalogRuntime } from './runtime-catalog';
export { FunctionRuntimeHasNoModelCallError } from './errors';
export { agentOf, runtimeView } from './runtime-request';
export { ActivationService } from './activations';
export type { ActivationServiceDeps, ManualActivationRequest, EventEmission } from './activations';
export { ResumeService } from './resume';
export type { ResumeServiceDeps, ResumeRequest, ResumeAnswer } from './resume';
export { activationEvents, emittedEventActivations, eventFollowers } from './activation-events';
export type { ActivationPayload, StartedActivation } from './activation-events';
export { resolveInputSlots, executionRequestInputs, InputBindingError } from './inputs';
export type { ResolveInputSlotsOptions } from './inputs';
export type { ExecutionJournal, ExecutionActivation } from './journal';
export { composeSettings, pluginSettingsIssues } from './plugin-settings';
export type { PluginSettings } from './plugin-settings';
export { renderRuntimeBody, earlierStructuredOutputs, turnNumberOf } from './runtime-template';
export type { RuntimeBodySources } from './runtime-template';
export { CatalogGenerations, catalogGeneration, executionCatalog, PluginGenerationUnavailableError, DEFAULT_GENERATIONS_KEPT } from './catalog-generations';
export { loadCatalog, reloadPlugins } from './plugin-reload';
export type { PluginReload } from './plugin-reload';
export { compactionEvent } from './compaction';
export { runCompactionBarrier, barrierRuntime, compactionWindows, estimateRequestTokens, COMPACTION_TRIGGER_SHARE, summaryCall } from './barrier';
export type { BarrierResult, CompactionWindows } from './barrier';
export { HistoryTooLongError } from './errors';
export { TurnAlternativesService, ALTERNATIVE_PREVIEW_CHARS } from './turn-alternatives';
export type { TurnAlternativeView } from './turn-alternatives';
export { WorldCreation, engineSharedPrompts, loadPromptFrom, SHARED_TEMPLATES, CreateWorldInput, RepairLoreInput, loreMarkerLines } from './world-creation';
export type { CreateWorldOptions, RepairLoreOptions, LoadPrompt, SharedTemplate, WorldCreationRequest } from './world-creation';
export {
  SessionHistoryUse,
  hasCompactionProvider,
  historyUse,
  historyFix,
  historyLimitCode,
  historyWarningFrom,
  DEFAULT_HISTORY_MESSAGE_LIMIT,
  HISTORY_WARNING_SHARE,
  COMPACTION_PLUGIN_ID,
} from './history-use';
export type { HistoryUse, HistoryState, HistoryLimitCode, SessionPluginList } from './history-use';
