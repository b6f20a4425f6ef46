export { slotLimits, checkSlotLimits } from './limits';
export { rememberingEstimator, slotEstimator } from './estimator';
export { contextKinds, hookedKinds } from './kinds';
export { runLedger, addedEntries, type RecordedLedgers } from './ledger';
export { ContextOverflowError, type BudgetCheckPoint } from './errors';
export { carrySections, sentSections } from './sections';
export { trimmedAssembly } from './trimmed-assembly';
