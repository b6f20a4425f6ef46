import {
  type AppendResult,
  ConcurrencyError,
  type EventStore,
  IdempotencyKeyTakenError,
  type IdempotencyRecord,
  type NewEvent,
  type StoredEvent,
} from '../../events';
import { type IdempotentAnswer, IdempotencyKeyMismatchError } from './idempotency';

/** How many times a pass is taken again when other appends to the stream (or the same key) come first. */
export const MAX_APPEND_TRIES = 50;

/** What one pass decided: the events to append to `streamId` at the version it read (none: answer without appending). */
export interface AppendPlan<T> {
  streamId: string;
  /** `head`: after the head of the tenant's existing stream, for events that depend on nothing it holds (`EventStore.appendAtHead`). */
  expectedVersion: number | 'head';
  events: NewEvent[];
  answer: T;
  /**
   * `head` only: the append's statement also reads the session's earliest execution queued or
   * running before it, handed to `appended` (`EventStore.appendAtHead` `earliestPending`).
   */
  earliestPending?: boolean;
  /** Called with the append's result once it is committed. */
  appended?: (result: AppendResult) => void;
}

export interface IdempotentAppendRequest<T> {
  tenantId: string;
  /** The key and the hash of the request it guards; absent: no key was sent. */
  idempotency?: IdempotencyRecord;
  /**
   * The answer recorded by the append first made under the key, from its first event (and the
   * store, for what follows it); null when that append was another request's (a 422).
   */
  replay: (prior: StoredEvent) => T | null | Promise<T | null>;
  /** Reads what the request needs, throws its refusals, and says what to append; `attempt` counts from 0. */
  plan: (attempt: number) => Promise<AppendPlan<T>>;
}

/**
 * The one loop of an idempotent append to a session's log: a key already used answers what its
 * append recorded (`replayed`; another request's key is `IdempotencyKeyMismatchError`); otherwise
 * the pass plans at the version it read and appends there, with the key in the first event's
 * metadata (same row, same transaction). When another append comes first (`ConcurrencyError`) or a
 * concurrent request with the same key wins (`IdempotencyKeyTakenError`), the next pass reads,
 * checks and decides again (then answers the winner's append), at most `MAX_APPEND_TRIES` times.
 */
export async function appendIdempotent<T>(
  store: Pick<EventStore, 'append' | 'appendAtHead' | 'findByIdempotencyKey'>,
  request: IdempotentAppendRequest<T>,
): Promise<IdempotentAnswer<T>> {
  const { tenantId, idempotency } = request;
  for (let attempt = 0; ; attempt++) {
    if (idempotency) {
      const prior = await store.findByIdempotencyKey(tenantId, idempotency.key);
      if (prior) {
        const answer = prior.requestHash === idempotency.requestHash ? await request.replay(prior.event) : null;
        if (answer === null) throw new IdempotencyKeyMismatchError();
        return { answer, replayed: true };
      }
    }
    const plan = await request.plan(attempt);
    if (plan.events.length === 0) return { answer: plan.answer, replayed: false };
    try {
      const append = { tenantId, streamId: plan.streamId, events: plan.events, ...(idempotency ? { idempotency } : {}) };
      const result =
        plan.expectedVersion === 'head'
          ? await store.appendAtHead({ ...append, ...(plan.earliestPending ? { earliestPending: true } : {}) })
          : await store.append({ ...append, expectedVersion: plan.expectedVersion });
      plan.appended?.(result);
      return { answer: plan.answer, replayed: false };
    } catch (error) {
      const again = error instanceof ConcurrencyError || error instanceof IdempotencyKeyTakenError;
      if (!again || attempt >= MAX_APPEND_TRIES) throw error;
    }
  }
}
