export { applyBudget, estimateRequest, inputLimit, limitProblems } from './apply-budget';
export type * from './types';
export { EMPTY_LEDGER } from './types';
