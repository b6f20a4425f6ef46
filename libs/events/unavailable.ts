import { UnavailableError } from '../errors';

/** What a caller is told to wait when the database cannot be reached. */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

/** Node socket errors that mean the server could not be reached or the connection died. */
const CONNECTION_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** SQLSTATEs of a server that is going away, not accepting connections yet, or full. */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);

/** Messages of node-postgres and pg-pool for connection-level failures (they carry no code). */
const CONNECTION_MESSAGES = [
  /timeout exceeded when trying to connect/i,
  /connection terminated/i,
  /connection ended unexpectedly/i,
  /client has encountered a connection error and is not queryable/i,
  /client was closed and is not queryable/i,
];

function isConnectionFailure(error: object): boolean {
  const code = 'code' in error && typeof error.code === 'string' ? error.code : null;
  if (code !== null) {
    if (CONNECTION_ERROR_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code)) return true;
    // SQLSTATE class 08: connection exception
    if (/^08[0-9A-Z]{3}$/.test(code)) return true;
  }
  const message = 'message' in error && typeof error.message === 'string' ? error.message : '';
  return CONNECTION_MESSAGES.some((m) => m.test(message));
}

/** The error itself, its `cause` chain and an AggregateError's members (node reports a failed connect to several addresses so). */
function* related(error: unknown, depth = 0): Generator<object> {
  if (depth > 5 || typeof error !== 'object' || error === null) return;
  yield error;
  if ('cause' in error) yield* related(error.cause, depth + 1);
  if (error instanceof AggregateError) for (const e of error.errors) yield* related(e, depth + 1);
}

/**
 * Classifies a failure of a database call: when the database could not be reached (refused, reset,
 * timed out, terminated, shutting down, too many connections) it returns an `UnavailableError`
 * (dependency `database`) carrying the original as its cause; any other failure returns null.
 */
export function databaseUnavailable(error: unknown): UnavailableError | null {
  if (error instanceof UnavailableError) return error;
  for (const e of related(error)) {
    if (isConnectionFailure(e)) {
      return new UnavailableError('database', 'the database cannot be reached; retry later', DATABASE_RETRY_AFTER_SECONDS, { cause: error });
    }
  }
  return null;
}

/** True when `error` is a connection-level database failure (see `databaseUnavailable`). */
export function isDatabaseUnavailable(error: unknown): boolean {
  return databaseUnavailable(error)?.dependency === 'database';
}
