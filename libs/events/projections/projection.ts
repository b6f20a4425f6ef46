import type { Transaction } from 'kysely';
import type { EventType, StoredEvent } from '../event-types';
import type { Database } from '../schema';

/**
 * A read model derived only from events. It declares the event types it handles; a runner reads
 * each batch of the log once and hands every projection the events of its types, in log order.
 * `applyBatch` must be deterministic: the same events give the same rows.
 */
export interface Projection {
  readonly name: string;
  /** Event types this projection reads; others are never passed to it. */
  readonly handles: readonly EventType[];
  /** Tables this projection owns; a replay empties them. Listed children first. */
  readonly tables: readonly (keyof Database)[];
  applyBatch(trx: Transaction<Database>, events: readonly StoredEvent[]): Promise<void>;
}

/** The definition of a projection that applies one event at a time. */
export interface EventByEventProjection {
  name: string;
  handles: readonly EventType[];
  tables: readonly (keyof Database)[];
  apply(trx: Transaction<Database>, event: StoredEvent): Promise<void>;
}

/** A projection whose batch is its events applied one by one, in order. */
export function eventByEvent(definition: EventByEventProjection): Projection {
  const { apply, ...rest } = definition;
  return {
    ...rest,
    async applyBatch(trx, events) {
      for (const event of events) await apply(trx, event);
    },
  };
}

/** The events of `events` a projection handles, in the same order. */
export function eventsFor(projection: Pick<Projection, 'handles'>, events: readonly StoredEvent[]): StoredEvent[] {
  return events.filter((e) => projection.handles.includes(e.type));
}
