/** Another writer appended to the stream first; re-read and decide again. */
export class ConcurrencyError extends Error {
  readonly code = 'STREAM_VERSION_CONFLICT';
  constructor(
    readonly streamId: string,
    readonly expectedVersion: number,
    readonly actualVersion: number,
  ) {
    super(`stream ${streamId}: expected version ${expectedVersion}, found ${actualVersion}`);
    this.name = 'ConcurrencyError';
  }
}

/** An event payload did not match the schema of its versioned type. */
export class InvalidEventError extends Error {
  readonly code = 'INVALID_EVENT';
  constructor(
    readonly eventType: string,
    readonly issues: { path: string; message: string }[],
  ) {
    super(`invalid ${eventType}: ${issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}`);
    this.name = 'InvalidEventError';
  }
}

/** A stream is owned by one tenant; another tenant may not write to it. */
export class StreamTenantMismatchError extends Error {
  readonly code = 'STREAM_TENANT_MISMATCH';
  constructor(readonly streamId: string) {
    super(`stream ${streamId} belongs to another tenant`);
    this.name = 'StreamTenantMismatchError';
  }
}
