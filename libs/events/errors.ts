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

/**
 * The tenant already used this idempotency key on another append (the key is unique per tenant,
 * enforced by an index in the same transaction as the append). The caller reads the first event
 * with `EventStore.findByIdempotencyKey` and answers from it.
 */
export class IdempotencyKeyTakenError extends EngineError {
  readonly code = 'IDEMPOTENCY_KEY_TAKEN';
  readonly category = 'conflict';
  constructor(
    readonly tenantId: string,
    readonly key: string,
  ) {
    super(`idempotency key already used by tenant ${tenantId}`);
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
