import type { HTTP_STATUS_BY_CATEGORY } from '../error.filter';

/** The error statuses the API answers (error.filter.ts maps each engine error category to one). */
export type ErrorStatus = (typeof HTTP_STATUS_BY_CATEGORY)[keyof typeof HTTP_STATUS_BY_CATEGORY];

/** One error answer of a route: when it happens, and the `code`s it carries. */
export interface ErrorResponse {
  description: string;
}

export type ErrorResponses = Partial<Record<ErrorStatus, ErrorResponse>>;

const list = (codes: string[]) => codes.map((c) => `\`${c}\``).join(', ');

/** Every route: an unexpected failure (logged; the answer has no internals). */
const internal: ErrorResponses = { 500: { description: 'Unexpected failure (logged; the answer says nothing more).' } };

/** Every `/v1` route: the API key, an undecodable path, the database or queue down. */
export const tenantErrors = (notFound: string[]): ErrorResponses => ({
  401: { description: `No \`Authorization: Bearer <api key>\`, or an unknown or revoked key: ${list(['MISSING_API_KEY', 'UNKNOWN_API_KEY'])}.` },
  403: {
    description:
      'The key lacks the scope the request needs (GET: `read`; other methods: `play`; `/v1/keys`: `admin`): `INSUFFICIENT_SCOPE`, `details` `{ requiredScope }`.',
  },
  404: {
    description: `Not found, or another tenant's (the same answer), or a path id that is not a UUID: ${list([...notFound, 'NOT_FOUND'])}.`,
  },
  429: {
    description:
      'The tenant’s request rate is used up: `RATE_LIMITED`; `Retry-After` says when the next request may go. Every `/v1` answer carries `RateLimit-Policy` (`"default";q=<capacity>;w=<seconds to fill>`) and `RateLimit` (`"default";r=<remaining>;t=<seconds until full>`) of draft-ietf-httpapi-ratelimit-headers-08 and later, and the same numbers as `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` (drafts up to -06).',
  },
  503: { description: `A dependency is down (\`DATABASE_UNAVAILABLE\`, \`QUEUE_UNAVAILABLE\`); the \`Retry-After\` header says when to try again.` },
  ...internal,
});

/** Routes that start model calls: the tenant's spend budget is checked first (nothing is appended when it is used up). */
export const budgetErrors: ErrorResponses = {
  402: {
    description:
      'The tenant’s spend budget for the period (`GET /v1/limits`) is used up: `BUDGET_EXHAUSTED`, `details` `{ period, resetsAt, exhausted, limit, used }`. Nothing was recorded; it passes again once an operator raises the budget or the period ends (`resetsAt`).',
  },
};

/** Every route that reads a JSON body (request-gate.ts, then the route's zod schema). */
export const bodyErrors = (invalidCodes: string[]): ErrorResponses => ({
  400: {
    description: `Invalid input; \`issues\` names each field path (\`(body)\` for the body as a whole): ${list(['INVALID_INPUT', 'MALFORMED_BODY', 'BODY_INCOMPLETE', 'JSON_TOO_DEEP', ...invalidCodes])}.`,
  },
  413: { description: 'The body is larger than the configured limit: `BODY_TOO_LARGE`.' },
  415: {
    description: `The body is not UTF-8 JSON, or its content-encoding is unknown: ${list(['UNSUPPORTED_MEDIA_TYPE', 'UNSUPPORTED_CHARSET', 'UNSUPPORTED_ENCODING'])}.`,
  },
});

/** Routes that take an `Idempotency-Key` header. */
export const idempotencyErrors: ErrorResponses = {
  422: { description: 'The `Idempotency-Key` was first used for a different request (another body, session or endpoint): `IDEMPOTENCY_KEY_MISMATCH`.' },
};

/** Writes to a session's log: another writer kept winning the append (rare; retry). */
export const appendConflict: ErrorResponses = {
  409: { description: 'The session changed under the request too many times in a row: `STREAM_VERSION_CONFLICT` (retry).' },
};

export const publicErrors: ErrorResponses = internal;

/** The operator's routes (`/admin/tenants…`): its key, the database down. */
export const operatorErrors = (notFound: string[]): ErrorResponses => ({
  401: { description: 'Not the operator’s key (`COVEL_ADMIN_API_KEY`; a tenant’s key neither): `ADMIN_KEY_REQUIRED`.' },
  404: { description: `Not found, or no admin key is configured (the routes do not exist then): ${list([...notFound, 'NOT_FOUND'])}.` },
  503: { description: 'A dependency is down (`DATABASE_UNAVAILABLE`); the `Retry-After` header says when to try again.' },
  ...internal,
});

/** Views served by an async projection: it skipped (quarantined) an event of the session, so the view would be incomplete. */
export const quarantinedViewErrors = (projection: string): ErrorResponses => ({
  503: {
    description: `A dependency is down (\`DATABASE_UNAVAILABLE\`, \`QUEUE_UNAVAILABLE\`), or the \`${projection}\` projection could not apply an event of this session and skipped it: \`PROJECTION_QUARANTINED\`, \`details\` \`{ projection, quarantined: [{ globalPosition, eventType, errorCode, quarantinedAt }] }\` (until a replay applies it; an operator is alerted). The \`Retry-After\` header says when to try again.`,
  },
});
