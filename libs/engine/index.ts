export { createEngine } from './engine';
export type { Engine, EngineCloseOptions, EngineRole, EngineOverrides } from './engine';
export { loadConfig, ConfigError, configWarnings, EngineEnv } from './config';
export { apiKeyWeakness, estimatedKeyBits, MIN_API_KEY_BITS, MIN_API_KEY_LENGTH } from './config';
export type { EngineConfig } from './config';
// where an engine is (PORT, COVEL_DATA_DIR), alone: also what libs/engine-client gives a client that does not load the engine
export { loadEngineLocation } from './config';
export type { EngineLocationConfig } from './config';
export { SessionService } from './session';
export { NoRunningTurnError } from './session';
export type { MidTurnAnswer, MidTurnRequest } from './session';
export type { Logger, LogFields, StructuredLogger } from './logging/logger';
export { structured } from './logging/logger';
export { createLogger, errorFields, LOG_FORMATS, LOG_LEVELS, REDACTED, secretValues, withLogScope, addToLogScope, logScope } from './logging';
export type { CreateLoggerOptions, LogDestination, LogFormat, LogLevel, LogSettings } from './logging';
export type { CreateSessionRequest, SubmitInputRequest, SessionServiceDeps, SessionWorldResolver } from './session';
export { chooseOpening, INVALID_OPENING, renderOpening } from './session';
export { IDEMPOTENCY_KEY_HEADER, IdempotencyKeyMismatchError, requestHash } from './session';
export type { IdempotentAnswer, IdempotentOperation } from './session';
export { TurnRunner, DEFAULT_HISTORY_READ_LIMIT } from './turn';
export type { TurnDeps, TurnOptions } from './turn';
export { SessionJournal } from './journal';
export { loadRuntimeHistory } from './history';
export type { LoadedHistory } from './history';
export { buildRuntimeRequest, requestMessages, promptCacheKey } from './request';
export type { RuntimeRequestInputs, RuntimeRequest } from './request';
export type { RequestBudget } from './request';
export { checkSlotLimits, slotLimits, slotEstimator, ContextOverflowError } from './budget';
export { TenantLimitsService, MemoryRateLimiter, RedisRateLimiter, LIMITS_CACHE_MS, budgetPeriod, BudgetExhaustedError, RateLimitedError } from './limits';
export type { LimitDefaults, RateDecision, RateLimiter, TenantLimitsView, UsageTotals, UsageTotalsReader } from './limits';
export { rebuildRequests } from './audit';
export { auditTurn, TurnNotFoundError } from './audit';
export type { TurnAudit } from './audit';
export type { RebuiltCall, SectionSource } from './audit';
export { staticSegments } from './catalog';
export { IMAGE_LIMITS, recentImageReferences, readRecentImages, attachImages } from './history';
export type { ImageReference, ReadImages } from './history';
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
  WORLD_QUEUE_NAME,
  TURN_JOB_ATTEMPTS,
  RUNTIME_JOB_ATTEMPTS,
  WORLD_JOB_ATTEMPTS,
  DEFAULT_RETRY_POLICY,
  turnJobId,
  runtimeJobId,
  worldJobId,
  QUEUE_RETRY_AFTER_SECONDS,
} from './queue';
export type {
  InProcessQueueOptions,
  BullMqOptions,
  BullMqConsumerOptions,
  TurnJob,
  RuntimeJob,
  WorldGenerationJob,
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
  TenantCaps,
  FairnessOptions,
} from './queue';
export { InProcessProviderHealth, RedisProviderHealth, SLOW_WINDOW_MS } from './provider-health';
export type { ProviderHealth, ProviderSlotHealth, DeadlineMiss } from './provider-health';
export { InProcessDeltaBus, RedisDeltaBus, FINISHED_CALL_GRACE_MS, CALL_DELTAS_TTL_MS, DELTA_MAX_CHARS, DELTA_WINDOW_MS, LISTENED_TTL_MS } from './live';
export type { CallDeltas, DeltaBus, StoryDelta, RedisDeltaBusOptions } from './live';
export { Sweeper } from './turn/sweeper';
export { EngineMetrics, installIoCounters, ioCounts, serveMetrics, turnTimeline, unionLength } from './metrics';
export type { IoCountsSnapshot, MetricsServer, MetricsSources, QueueDepthSample, TurnTimeline, TimelineEvent } from './metrics';
export type { SweeperDeps, SweeperOptions } from './turn/sweeper';
export { WorldCatalog, WorldNotFoundError, worldLorebook } from './catalog';
export type { WorldLoader, WorldRef } from './catalog';
export {
  WorldService,
  MAX_WORLD_PAGE,
  WorldArchivedError,
  WorldReadOnlyError,
  WorldRevisionMismatchError,
  WorldRevisionRequiredError,
  WorldTooLargeError,
  applyMergePatch,
  validWorldDocument,
  moveSessionWorld,
  WorldFileError,
  WORLD_IMPORT_LIMIT_BYTES,
} from './worlds';
export type { WorldView, WorldSummaryView, MoveSessionWorldRequest, WorldExportFormat, WorldFile } from './worlds';
export { worldReplyRules } from './startup';
export { LORE_SCAN_LIMIT } from './history';
export { ASYNC_PROJECTIONS, createAsyncProjector, engineInlineProjections } from './startup';
export { RuntimeCatalog, DEFAULT_STAGES } from './catalog';
export {
  SessionNotFoundError,
  FencedOutError,
  JobHandedBackError,
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
export { readSelfData, foldedSelfData } from './request';
export type { ExtensionResolver, RequestPlugins } from './plugin-host';
export type { CatalogRuntime } from './catalog';
export { FunctionRuntimeHasNoModelCallError } from './errors';
export { agentOf, runtimeView } from './request';
export { ActivationService } from './activations';
export type { ActivationServiceDeps, ManualActivationRequest, EventEmission } from './activations';
export { ResumeService } from './session';
export type { ResumeServiceDeps, ResumeRequest, ResumeAnswer } from './session';
export { CancelService, ExecutionEndedError } from './session';
export type { CancelAnswer, CancelRequest, CancelServiceDeps } from './session';
export { activationEvents, emittedEventActivations, eventFollowers } from './activations';
export type { ActivationPayload, StartedActivation } from './activations';
export { resolveInputSlots, executionRequestInputs, InputBindingError, resolveRuntimeExports } from './inputs';
export type { ResolveInputSlotsOptions } from './inputs';
export type { ExecutionJournal, ExecutionActivation } from './journal';
export { composeSettings, pluginSettingsIssues } from './plugin-host/plugin-settings';
export { unknownSlotIssues, type PreferencesPatch, type SessionPreferences } from './preferences';
export type { PluginSettings } from './plugin-host/plugin-settings';
export { renderRuntimeBody, earlierStructuredOutputs, turnNumberOf } from './request';
export type { RuntimeBodySources } from './request';
export { CatalogGenerations, catalogGeneration, executionCatalog, PluginGenerationUnavailableError, DEFAULT_GENERATIONS_KEPT } from './catalog';
export { loadCatalog, reloadPlugins } from './catalog';
export type { PluginReload } from './catalog';
export { compactionEvent } from './compaction';
export { runCompactionBarrier, barrierRuntime, compactionWindows, estimateRequestTokens, COMPACTION_TRIGGER_SHARE, summaryCall } from './barrier';
export type { BarrierResult, CompactionWindows } from './barrier';
export { HistoryTooLongError } from './history';
export { SessionBranchService } from './session';
export type { BranchAnswer, BranchSessionRequest } from './session';
export { TurnAlternativesService, ALTERNATIVE_PREVIEW_CHARS, TurnRevertService, MessageEditService, appendIdempotent } from './session';
export type { TurnAlternativeView, RevertAnswer, RevertRequest, EditMessageAnswer, EditMessageRequest } from './session';
export {
  WorldCreation,
  engineSharedPrompts,
  loadPromptFrom,
  SHARED_TEMPLATES,
  CreateWorldInput,
  RepairLoreInput,
  loreMarkerLines,
  MAX_WORLD_DESCRIPTION_CHARS,
} from './world-creation';
export type { CreateWorldOptions, RepairLoreOptions, LoadPrompt, SharedTemplate, WorldCreationRequest } from './world-creation';
export { SessionHistoryUse, hasCompactionProvider } from './history-use';
export type { SessionPluginList } from './history-use';
export {
  historyUse,
  historyFix,
  historyLimitCode,
  historyWarningFrom,
  DEFAULT_HISTORY_MESSAGE_LIMIT,
  HISTORY_WARNING_SHARE,
  COMPACTION_PLUGIN_ID,
} from './history';
export type { HistoryUse, HistoryState, HistoryLimitCode } from './history';
export {
  WorldGenerationService,
  WorldGenerationRunner,
  WorldGenerationNotFoundError,
  DEFAULT_GENERATION_SLOT,
  MAX_GENERATION_WAIT_MS,
  generationEnded,
  generatedWorldKey,
  planGeneration,
  generationModelCall,
  GENERATED_WORLD_JSON_SCHEMA,
  checkDraft,
} from './world-generation';
export type {
  GenerateWorldRequest,
  WorldGenerationAudit,
  WorldGenerationCallAudit,
  WorldGenerationSettings,
  WorldGenerationView,
  GenerationPlan,
  PlannedCall,
} from './world-generation';
