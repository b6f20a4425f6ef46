import { EngineError } from '../../../errors';
import { isDatabaseUnavailable } from '../../unavailable';

/**
 * SQLSTATE classes of failures that say nothing of the event: 08 connection exception, 40
 * transaction rollback (deadlock, serialization), 53 insufficient resources (disk full, out of
 * memory, too many connections), 57 operator intervention (query cancelled, shutting down), 58
 * system error (I/O).
 */
const TRANSIENT_SQLSTATE_CLASSES = new Set(['08', '40', '53', '57', '58']);

/** The error and its `cause` chain. */
function* chain(error: unknown, depth = 0): Generator<object> {
  if (depth > 5 || typeof error !== 'object' || error === null) return;
  yield error;
  if ('cause' in error) yield* chain(error.cause, depth + 1);
}

/**
 * True when applying an event failed for a reason that is not the event's (a database away, a
 * deadlock, a full disk, a cancelled query, the engine's own `unavailable` errors): such a failure
 * is retried with backoff as any other, but it never counts toward the event's quarantine.
 */
export function isTransientFailure(error: unknown): boolean {
  if (isDatabaseUnavailable(error)) return true;
  for (const e of chain(error)) {
    if (e instanceof EngineError && e.category === 'unavailable') return true;
    const code = 'code' in e ? e.code : undefined;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && TRANSIENT_SQLSTATE_CLASSES.has(code.slice(0, 2))) return true;
  }
  return false;
}
