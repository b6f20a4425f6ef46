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

/**
 * A projection a turn reads (executions, turn_messages, summaries) is stopped at an event of this
 * session: the session's turns cannot run until the projection applies it (other sessions run).
 */
export class SessionProjectionStoppedError extends EngineError {
  readonly code = 'SESSION_PROJECTION_STOPPED';
  readonly category = 'unavailable';
  constructor(
    readonly sessionId: string,
    readonly stopped: readonly { projection: string; globalPosition: number; error: string }[],
  ) {
    super(
      `session ${sessionId} cannot run turns: ${stopped
        .map((s) => `projection ${s.projection} is stopped at its event at global position ${s.globalPosition} (${s.error})`)
        .join('; ')}; its turns run again once the projection applies that event`,
    );
  }
}
