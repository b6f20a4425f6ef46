/** World creation from a description (`POST /v1/worlds/generate`): the job's plan, its worker, its progress and its audit. */
export {
  WorldGenerationService,
  WorldGenerationNotFoundError,
  DEFAULT_GENERATION_SLOT,
  MAX_GENERATION_WAIT_MS,
  generationView,
  generationEnded,
} from './generation-service';
export type {
  GenerateWorldRequest,
  WorldGenerationAudit,
  WorldGenerationCallAudit,
  WorldGenerationServiceDeps,
  WorldGenerationSettings,
  WorldGenerationView,
} from './generation-service';
export { WorldGenerationRunner, generatedWorldKey } from './generation-runner';
export type { WorldGenerationRunnerDeps } from './generation-runner';
export { planGeneration } from './generation-plan';
export type { GenerationInputs, GenerationPlan, PlannedCall, RecordedReply } from './generation-plan';
export { generationModelCall } from './generation-call';
export { GeneratedWorld, GENERATED_WORLD_JSON_SCHEMA, GENERATED_WORLD_SCHEMA_NAME, checkDraft, generatedDocument } from './generated-world';
export type { GenerationProblem, GenerationVerdict } from './generated-world';
export { foldJobLog, readJobLog } from './job-log';
export type { JobLog } from './job-log';
