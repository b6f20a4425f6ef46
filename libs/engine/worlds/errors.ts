import { EngineError, type ErrorIssue } from '../../errors';

/** `If-Match` names a revision the world is no longer at (someone wrote in between): read it again. */
export class WorldRevisionMismatchError extends EngineError {
  readonly code = 'WORLD_REVISION_MISMATCH';
  readonly category = 'precondition-failed';
  override readonly issues: readonly ErrorIssue[];
  constructor(
    readonly worldId: string,
    readonly expected: number,
    readonly current: number,
  ) {
    super(`world ${worldId} is at revision ${current}, not ${expected}; read it again and retry with If-Match: "${current}"`);
    this.issues = [{ path: 'If-Match', message: `the world is at revision ${current}` }];
  }
}

/** A write that replaces or changes a world's document must say which revision it changes (`If-Match`). */
export class WorldRevisionRequiredError extends EngineError {
  readonly code = 'WORLD_REVISION_REQUIRED';
  readonly category = 'precondition-required';
  override readonly issues: readonly ErrorIssue[] = [{ path: 'If-Match', message: 'required: the revision you changed, e.g. If-Match: "3"' }];
  constructor(readonly worldId: string) {
    super(`world ${worldId}: a change needs If-Match with the revision it changes, e.g. If-Match: "3"`);
  }
}

/** An archived world takes no new revision and no new session. */
export class WorldArchivedError extends EngineError {
  readonly code = 'WORLD_ARCHIVED';
  readonly category = 'conflict';
  constructor(readonly worldId: string) {
    super(`world ${worldId} is archived`);
  }
}

/** A deployment's built-in file world (`worlds/<id>/WORLD.md`) is read-only through the API. */
export class WorldReadOnlyError extends EngineError {
  readonly code = 'WORLD_READ_ONLY';
  readonly category = 'conflict';
  constructor(readonly worldId: string) {
    super(`world ${worldId} is a built-in world of this deployment (a WORLD.md file): read-only; export it and create your own`);
  }
}

/** The document is larger than a world may be (`WORLD_LIMITS.documentBytes`). */
export class WorldTooLargeError extends EngineError {
  readonly code = 'WORLD_TOO_LARGE';
  readonly category = 'too-large';
  override readonly issues: readonly ErrorIssue[];
  constructor(
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(`the world document is ${bytes} bytes as JSON; the limit is ${limit}`);
    this.issues = [{ path: '(body)', message: `at most ${limit} bytes as JSON (WORLD_LIMITS.documentBytes)` }];
  }
}
