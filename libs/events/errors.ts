import { EngineError } from '../errors';
/** Another writer appended to the stream first; re-read and decide again. */
export class ConcurrencyError extends EngineError {
  readonly code = 'STREAM_VERSION_CONFLICT';
  readonly category = 'conflict';
  constructor(
    readonly streamId: string,
    readonly expectedVersion: number,
    readonly actualVersion: number,
  ) {
    super(`stream ${streamId}: expected version ${expectedVersion}, found ${actualVersion}`);
  }
}

/** An event payload did not match the schema of its versioned type. */
export class InvalidEventError extends EngineError {
  readonly code = 'INVALID_EVENT';
  readonly category = 'invalid';
  constructor(
    readonly eventType: string,
    override readonly issues: { path: string; message: string }[],
  ) {
    super(`invalid ${eventType}: ${issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}`);
  }
}

/** A stream is owned by one tenant; another tenant may not write to it. */
export class StreamTenantMismatchError extends EngineError {
  readonly code = 'STREAM_TENANT_MISMATCH';
  /** Another tenant's stream is reported as absent, never as existing. */
  readonly category = 'not-found';
  constructor(readonly streamId: string) {
    super(`stream ${streamId} belongs to another tenant`);
  }
}
