import type { Transaction } from 'kysely';
import type { StoredEvent } from '../event-types';
import type { Database } from '../schema';

/** A read model derived only from events. `apply` must be deterministic: same events, same rows. */
export interface Projection {
  readonly name: string;
  /** Tables this projection owns; a replay empties them. Listed children first. */
  readonly tables: readonly (keyof Database)[];
  apply(trx: Transaction<Database>, event: StoredEvent): Promise<void>;
}
