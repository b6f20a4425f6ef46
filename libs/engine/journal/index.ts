/** The execution journal: what a session's executions recorded, read back from its events. */
export { canonicalJson, inputHash, resultKey } from './input-hash';
export { SessionJournal, executionOutputs, outcomeKey, runtimeKey, waitingSuspension } from './journal';
export type { AgentLoopRecord, ExecutionActivation, ExecutionJournal, ExecutionSuspension, GeneratedAssetRecord, RuntimeOutput } from './journal';
