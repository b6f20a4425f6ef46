/** A session's service side: creation and input (idempotent), mid-turn messages, a turn's alternatives, resuming a suspended turn, stopping one, the session's plugins. */
export { IDEMPOTENCY_KEY_HEADER, IdempotencyKeyMismatchError, requestHash } from './idempotency';
export type { IdempotentAnswer, IdempotentOperation } from './idempotency';
export { NoRunningTurnError } from './mid-turn';
export type { MidTurnAnswer, MidTurnRequest } from './mid-turn';
export { CancelService, ExecutionEndedError } from './cancel';
export type { CancelAnswer, CancelRequest, CancelServiceDeps } from './cancel';
export { ResumeService } from './resume';
export type { ResumeAnswer, ResumeRequest, ResumeServiceDeps } from './resume';
export { resolveSessionPlugins } from './session-plugins';
export type { SessionPluginResolver } from './session-plugins';
export { loadSessionJournal, loadSessionSettings, readSessionCreated } from './session-reads';
export type { SessionSettings } from './session-reads';
export { SessionService } from './session-service';
export type { CreateSessionRequest, SessionServiceDeps, SessionWorldResolver, SubmitInputRequest } from './session-service';
export { chooseOpening, INVALID_OPENING, renderOpening } from './session-opening';
export { ALTERNATIVE_PREVIEW_CHARS, TurnAlternativesService } from './turn-alternatives';
export type { TurnAlternativeView } from './turn-alternatives';
