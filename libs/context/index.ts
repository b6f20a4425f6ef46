export { buildContext, withPostContextAssembly } from './build-context';
export { historyWindow, includesSummaries } from './history-window';
export { serializeSystemPrompt, stripCacheBreaks, splitAtCacheBreaks, historyBoundary, CACHE_BREAK, CACHE_BOUNDARY_SECTIONS } from './cache-boundaries';
export { placeSegments, placementOf, matchesAudience, compareSegments } from './extension-segments';
export type { Placement } from './extension-segments';
export { frameworkPreamble } from './preamble';
export { renderTurnContext } from './turn-context';
export { thisTurnStoryText, pointStoryInputs } from './story-text';
export { modelFacingJson, escapeXml, selfDataRow, currentCharacterSummary } from '../data-boundary';
export { HookResultError } from './post-context-assembly';
export { fixedText } from './fixed-text';
export { estimateTokens } from '../text';
export { imageContent, imageDescription, imageTokens, recentImagesText, IMAGE_CONTENT_MAX_CHARS, RECENT_IMAGES_MAX, IMAGE_TOKENS } from './images';
export { activateLorebook } from './lorebook';
export type { LorebookEntryInput } from './lorebook';
export * from './types';
export { renderTemplate, templateVariables, lookupVariable, variableText } from './template';
export type { TemplateVariables, TemplateVariablesInput, TemplateWorld, DeclaredSetting, RenderTemplateOptions } from './template';
export { isBookkeepingValue, isBookkeepingKey, ModelFacingJsonError, MAX_MODEL_FACING_DEPTH, dataBlock } from '../data-boundary';
export { HiddenDataInjectionError, isHiddenNamespace } from './hidden-data';
export { compactionLimits, MAX_SUMMARY_SEGMENTS } from './compaction-limits';
export type { CompactionLimits } from './compaction-limits';
export { validateCompaction } from './validate-compaction';
export type {
  CompactionValidationInput,
  CompactionValidation,
  CompactionPlan,
  CompactionProblem,
  PlannedSegment,
  StoredSummary,
  MessageProblemKind,
  SummaryProblemKind,
} from './validate-compaction';
export { acceptedSummaryReply, discardingCutReplies } from './summary-reply';
export {
  applyBudget,
  estimateRequest,
  inputLimit,
  limitProblems,
  EMPTY_LEDGER,
  overflowText,
  BudgetKindsError,
  budgetTarget,
  estimateMessage,
  estimateFixed,
  canonicalJson,
  findToolGroups,
  callsKey,
  replayLedger,
  elideResult,
  frozenDigest,
  truncateMiddle,
  DIGEST_ARGUMENTS_MAX,
  DIGEST_SUMMARY_MAX,
  toolResultSummary,
} from './budget';
export type {
  Estimator,
  BudgetLimits,
  BudgetMessage,
  BudgetToolCall,
  BudgetMessageKind,
  LedgerCall,
  LedgerEntry,
  BudgetLedger,
  BudgetMode,
  BudgetRequest,
  BudgetStats,
  BudgetOutcome,
  ToolGroup,
  GroupDecision,
} from './budget';
