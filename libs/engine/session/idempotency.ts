import { createHash } from 'node:crypto';
import { EngineError, type ErrorIssue } from '../../errors';
import type { EventStore, IdempotencyRecord, StoredEvent } from '../../events';

/** The HTTP header that carries an idempotency key (named in the errors about it). */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/** The operations a key can guard; part of the request hash, so one key cannot serve two of them. */
export type IdempotentOperation =
  | 'create-session'
  | 'submit-input'
  | 'activate'
  | 'resume'
  | 'cancel-execution'
  | 'retry-turn'
  | 'select-alternative'
  | 'branch-session'
  | 'revert-turn'
  | 'edit-message'
  | 'create-world'
  | 'revise-world'
  | 'archive-world'
  | 'move-world-revision'
  | 'generate-world';

/**
 * A stable hash of the canonical request a key guards: the operation, the session it targets
 * (null for session creation) and the validated body, with object keys sorted.
 */
export function requestHash(request: { operation: IdempotentOperation; sessionId: string | null; body: Record<string, unknown> }): string {
  return createHash('sha256').update(canonicalJson(request)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The key was first used for another request (another body, session or endpoint): 422. */
export class IdempotencyKeyMismatchError extends EngineError {
  readonly code = 'IDEMPOTENCY_KEY_MISMATCH';
  readonly category = 'unprocessable';
  override readonly issues: readonly ErrorIssue[] = [
    { path: IDEMPOTENCY_KEY_HEADER, message: 'already used for a different request (another body, session or endpoint); use a new key' },
  ];
  constructor() {
    super(`${IDEMPOTENCY_KEY_HEADER}: already used for a different request (another body, session or endpoint); use a new key`);
  }
}

/** An answer to an idempotent request, and whether it is the replay of an earlier one. */
export interface IdempotentAnswer<T> {
  answer: T;
  replayed: boolean;
}

/**
 * The answer recorded under the key, or null when the tenant has not used it: `answerOf` reads it
 * from the first event of the append made under the key. The same key for another request (its
 * hash differs, or its event is not one `answerOf` reads) is an `IdempotencyKeyMismatchError`.
 */
export async function priorAnswer<T>(
  store: Pick<EventStore, 'findByIdempotencyKey'>,
  tenantId: string,
  idempotency: IdempotencyRecord,
  answerOf: (event: StoredEvent) => T | null,
): Promise<T | null> {
  const prior = await store.findByIdempotencyKey(tenantId, idempotency.key);
  if (!prior) return null;
  const answer = prior.requestHash === idempotency.requestHash ? answerOf(prior.event) : null;
  if (answer === null) throw new IdempotencyKeyMismatchError();
  return answer;
}
