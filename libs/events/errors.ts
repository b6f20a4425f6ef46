import { EngineError, UnavailableError } from '../errors';
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

/** Who holds an embedded data directory (read from its lock file). */
export interface DataDirHolder {
  pid: number;
  hostname: string;
  startedAt: string;
}

/**
 * Another process serves this PGlite data directory. PGlite is one process per directory: a
 * second opener would write beside the server and lose committed data, so it is refused.
 */
export class DataDirLockedError extends EngineError {
  readonly code = 'DATA_DIR_LOCKED';
  readonly category = 'conflict';
  constructor(
    readonly dataDir: string,
    readonly lockFile: string,
    readonly holder: DataDirHolder | null,
  ) {
    const who = holder ? `process ${holder.pid} on ${holder.hostname} (since ${holder.startedAt})` : 'another process';
    super(
      `${dataDir} is in use by ${who}: a PGlite data directory serves one process at a time. ` +
        `Stop that process first (Ctrl-C the \`npm start\`${holder ? `, or kill ${holder.pid}` : ''}) and run this again, ` +
        `or use the running server's HTTP API instead. If that process no longer exists, delete ${lockFile}.`,
    );
  }
}

/**
 * Compaction safeguard (spec §1 "History compaction"): a `history.compacted@1` names new messages
 * that are not the session's stored uncompacted prefix, in order (a history transform may reorder
 * what the prompt shows, never what gets marked). The append is refused whole, nothing changes;
 * the caller skips this compaction.
 */
export class CompactionPrefixMismatchError extends EngineError {
  readonly code = 'COMPACTION_PREFIX_MISMATCH';
  readonly category = 'conflict';
  constructor(
    readonly streamId: string,
    /** The message ids the compaction names, in its order. */
    readonly named: readonly string[],
    /** The stored uncompacted prefix, oldest first (as many as were named, or fewer when the history is shorter). */
    readonly stored: readonly string[],
  ) {
    const at = named.findIndex((id, i) => id !== stored[i]);
    super(
      `stream ${streamId}: a compaction names ${named.length} messages that are not its uncompacted prefix ` +
        `(at ${at}: named ${named[at] ?? '(none)'}, stored ${stored[at] ?? '(none)'})`,
    );
  }
}

/**
 * A `turn.superseded@1` names a turn whose rows are not the session's last ones, uncompacted (only
 * the latest turn has alternatives). The append is refused whole, nothing changes.
 */
export class SupersededTurnNotLatestError extends EngineError {
  readonly code = 'SUPERSEDED_TURN_NOT_LATEST';
  readonly category = 'conflict';
  constructor(
    readonly streamId: string,
    readonly turnId: string,
  ) {
    super(`stream ${streamId}: turn ${turnId} cannot be superseded: its messages are not the session's last uncompacted ones`);
  }
}

/**
 * An inline projection (applied in the append's transaction) could not apply an event: the append
 * is rolled back whole (no event, no row), so only this stream's append fails; other appends of
 * the stream and every other stream go on. A bug or a broken invariant, not the caller's input.
 */
export class InlineProjectionFailedError extends EngineError {
  readonly code = 'INLINE_PROJECTION_FAILED';
  readonly category = 'internal';
  constructor(
    readonly projection: string,
    readonly eventType: string,
    readonly streamId: string,
    readonly tenantId: string,
    cause: unknown,
  ) {
    super(`inline projection ${projection} could not apply ${eventType} of stream ${streamId}: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
  }
}

/** How long a client is told to wait before asking a quarantined view again (an operator has to act first). */
export const QUARANTINED_VIEW_RETRY_AFTER_SECONDS = 300;

/**
 * A view of a session misses events its projection quarantined (could not apply, skipped): its
 * answer would be incomplete, so there is none (503) until a replay applies them. `details` names
 * the projection and the session's skipped events (position, type, error code; no error text).
 */
export class ProjectionQuarantinedError extends UnavailableError {
  override readonly details: Readonly<Record<string, unknown>>;
  constructor(
    readonly projection: string,
    events: readonly { globalPosition: number; eventType: string; errorCode: string; quarantinedAt: string }[],
  ) {
    super(
      projection,
      `this view of the session is incomplete: the ${projection} projection could not apply ${events.length} of its event(s) and skipped them (quarantined); an operator has been alerted`,
      QUARANTINED_VIEW_RETRY_AFTER_SECONDS,
    );
    this.details = {
      projection,
      quarantined: events.map((e) => ({ globalPosition: e.globalPosition, eventType: e.eventType, errorCode: e.errorCode, quarantinedAt: e.quarantinedAt })),
    };
  }
  override get code(): string {
    return 'PROJECTION_QUARANTINED';
  }
}
