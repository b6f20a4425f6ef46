import { EngineError } from '../errors';
export class SessionNotFoundError extends EngineError {
  readonly code = 'SESSION_NOT_FOUND';
  readonly category = 'not-found';
  constructor(readonly sessionId: string) {
    super(`session ${sessionId} not found`);
  }
}

/** A newer attempt of the execution took over, or it already finished: stop without writing. */
export class FencedOutError extends EngineError {
  readonly code = 'FENCED_OUT';
  readonly category = 'conflict';
  constructor(
    readonly executionId: string,
    readonly attempt: number,
  ) {
    super(`execution ${executionId}: attempt ${attempt} is no longer current`);
  }
}
