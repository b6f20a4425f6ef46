/**
 * The engine's one error base. Every domain failure carries a stable `code` (for clients and logs)
 * and a `category`; the HTTP API maps categories to status codes in one place
 * (`apps/api/error.filter.ts`), workers decide retry versus permanent failure from the category.
 * Failures a caller expects (an unknown id, a conflict) are still values where an API allows it;
 * these classes are for what has to cross a boundary as an exception.
 */
export type ErrorCategory =
  /** The caller sent something malformed or not allowed: fix the request (400). */
  | 'invalid'
  /** Well-formed, but cannot be processed as asked, e.g. an idempotency key reused for another request (422). */
  | 'unprocessable'
  /** The request conflicts with current state (409). */
  | 'conflict'
  /** A precondition of the request (`If-Match`) does not hold: the caller read something older (412). */
  | 'precondition-failed'
  /** The request must be conditional (`If-Match`) and is not (428). */
  | 'precondition-required'
  /** The thing named does not exist for this caller (404). */
  | 'not-found'
  /** No or a bad credential (401). */
  | 'unauthenticated'
  /** A good credential without the right to do this (an API key without the scope it needs): 403. */
  | 'forbidden'
  /** The body is larger than allowed (413). */
  | 'too-large'
  /** A media type or encoding the API does not read (415). */
  | 'unsupported'
  /** The caller holds as many of something as it may (open event streams): retry after `Retry-After` (429). */
  | 'too-many-requests'
  /** The caller's spend budget for the period is used up: raise it or wait for the period's end, no automatic retry (402). */
  | 'payment-required'
  /** A dependency (database, queue, provider) cannot be reached now: retry later (503). */
  | 'unavailable'
  /** A bug or a broken invariant (500). */
  | 'internal';

export interface ErrorIssue {
  /** Dotted path of the field, or `(body)`. */
  path: string;
  message: string;
}

export abstract class EngineError extends Error {
  abstract readonly code: string;
  abstract readonly category: ErrorCategory;
  /** Field-level detail for `invalid` errors. */
  readonly issues: readonly ErrorIssue[] = [];
  /** More of what a client may act on, answered as `details` (never tenant data of another tenant, never internals). */
  readonly details: Readonly<Record<string, unknown>> | null = null;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Bad input from a caller; names each field. */
export class InvalidInputError extends EngineError {
  readonly category = 'invalid';
  override readonly issues: readonly ErrorIssue[];
  constructor(
    issues: readonly ErrorIssue[],
    readonly code: string = 'INVALID_INPUT',
  ) {
    super(issues.map((i) => `${i.path}: ${i.message}`).join('; '));
    this.issues = issues;
  }
}

/** A named thing that does not exist (or belongs to another tenant: same answer). */
export class NotFoundError extends EngineError {
  readonly category = 'not-found';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The request conflicts with what is already recorded. */
export class ConflictError extends EngineError {
  readonly category = 'conflict';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** A dependency is down or too slow; `retryAfterSeconds` is what the caller should wait. */
export class UnavailableError extends EngineError {
  readonly category = 'unavailable';
  constructor(
    readonly dependency: string,
    message: string,
    readonly retryAfterSeconds = 1,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
  get code(): string {
    return `${this.dependency.toUpperCase()}_UNAVAILABLE`;
  }
}

/** The caller is over a limit of what it may hold at once; `retryAfterSeconds` is what it should wait (`Retry-After`). */
export class TooManyRequestsError extends EngineError {
  readonly category = 'too-many-requests';
  constructor(
    readonly code: string,
    message: string,
    readonly retryAfterSeconds = 5,
  ) {
    super(message);
  }
}

export function isEngineError(error: unknown): error is EngineError {
  return error instanceof EngineError;
}
