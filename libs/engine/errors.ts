export class SessionNotFoundError extends Error {
  readonly code = 'SESSION_NOT_FOUND';
  constructor(readonly sessionId: string) {
    super(`session ${sessionId} not found`);
    this.name = 'SessionNotFoundError';
  }
}

/** A newer attempt of the execution took over, or it already finished: stop without writing. */
export class FencedOutError extends Error {
  readonly code = 'FENCED_OUT';
  constructor(
    readonly executionId: string,
    readonly attempt: number,
  ) {
    super(`execution ${executionId}: attempt ${attempt} is no longer current`);
    this.name = 'FencedOutError';
  }
}
