import { EngineError, type ErrorIssue } from '../errors';

/** `createPluginHarness` was given options it cannot use; `issues` names each field (`replies["a/b"]`, `world.characters.0.id`). */
export class HarnessOptionsError extends EngineError {
  readonly code = 'HARNESS_OPTIONS_INVALID';
  readonly category = 'invalid';
  override readonly issues: readonly ErrorIssue[];
  constructor(issues: readonly ErrorIssue[], options?: { cause?: unknown }) {
    super(`bad plugin harness options: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, options);
    this.issues = issues;
  }
}

/** A turn ended `failed` (and the caller did not pass `allowFailure`); carries the engine's recorded error. */
export class HarnessTurnFailedError extends EngineError {
  readonly code = 'HARNESS_TURN_FAILED';
  readonly category = 'unprocessable';
  constructor(
    readonly executionId: string,
    readonly failure: { code: string; message: string },
  ) {
    super(`the turn failed: ${failure.code}: ${failure.message}`);
  }
}

/** A turn did not end within the harness's `turnTimeoutMs`. */
export class HarnessTurnTimeoutError extends EngineError {
  readonly code = 'HARNESS_TURN_TIMEOUT';
  readonly category = 'unavailable';
  constructor(
    readonly executionId: string,
    readonly timeoutMs: number,
    status: string,
  ) {
    super(`the turn did not end within ${timeoutMs} ms (status: ${status})`);
  }
}

/** A question about a turn the turn cannot answer: a runtime that made no request, an output that is not JSON, a closed harness. */
export class HarnessLookupError extends EngineError {
  readonly code = 'HARNESS_LOOKUP_FAILED';
  readonly category = 'not-found';
}
