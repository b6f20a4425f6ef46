/** One execution's run, what every step writes through: the steps' dependencies (TurnDeps), fenced appends, commits and the hand-off to the next input, a runtime's recorded output, the jobs' trace spans. */
export { commitTurn, committedMessages, missingRuntimes } from './commit';
export { DATABASE_RETRY_MS, DEFAULT_HISTORY_READ_LIMIT, historyReadLimit } from './deps';
export type { TurnDeps, TurnOptions } from './deps';
export { ExecutionRun, isCurrentAttempt } from './fenced-append';
export type { ExecutionRef } from './fenced-append';
export { handOff } from './hand-off';
export { recordRuntimeOutput } from './record-output';
export { enqueueInOwnTrace, runtimeJobSpan, turnJobSpan } from './trace-spans';
