import { sql } from 'kysely';
import { type EventStore, eventSchemas, type EventType, type InlineProjection, type LogCursor, type NewEvent, type OrderedLogEntry } from '../../libs/events';

/**
 * Inline projections that do nothing but wait, to hold an append's transaction open after its
 * insert and before its commit (its stream lock held, its transaction id taken), for tests of
 * concurrent appends and of the log's read order.
 */
const ALL_TYPES = Object.keys(eventSchemas) as EventType[];

export interface Gate {
  /** Resolves once an append to the stream is inside its transaction (events inserted, lock held). */
  entered: Promise<void>;
  release(): void;
}

/** Holds appends to the streams it is asked to, until released. */
export function gateProjection(): { projection: InlineProjection; hold(streamId: string): Gate } {
  const gates = new Map<string, { enter(): void; released: Promise<void> }>();
  return {
    projection: {
      name: 'test_gate',
      handles: ALL_TYPES,
      tables: [],
      async applyBatch(_trx, events) {
        const gate = gates.get(events[0].streamId);
        if (!gate) return;
        gate.enter();
        await gate.released;
      },
    },
    hold(streamId) {
      let enter!: () => void;
      let release!: () => void;
      const entered = new Promise<void>((r) => (enter = r));
      const released = new Promise<void>((r) => (release = r));
      gates.set(streamId, { enter, released });
      return {
        entered,
        release() {
          gates.delete(streamId);
          release();
        },
      };
    },
  };
}

/**
 * Waits inside the transaction of an append for the time planned for it (keyed by stream and its
 * first version): half of them in JavaScript, half in the server (`pg_sleep`), so commits come
 * in an order unlike the order of the inserts.
 */
export function delayProjection(): { projection: InlineProjection; plan(streamId: string, firstVersion: number, delayMs: number): void } {
  const delays = new Map<string, number>();
  return {
    projection: {
      name: 'test_delay',
      handles: ALL_TYPES,
      tables: [],
      async applyBatch(trx, events) {
        const key = `${events[0].streamId}:${events[0].streamVersion}`;
        const ms = delays.get(key);
        if (ms === undefined) return;
        delays.delete(key);
        if (ms % 2 === 0) await new Promise((r) => setTimeout(r, ms));
        else await sql`select pg_sleep(${ms / 1000})`.execute(trx);
      },
    },
    plan(streamId, firstVersion, delayMs) {
      delays.set(`${streamId}:${firstVersion}`, delayMs);
    },
  };
}

export const inputEvent = (streamId: string, n: number): NewEvent => ({
  type: 'player-input.submitted@1',
  data: { executionId: `${streamId}-e${n}`, turnId: `${streamId}-u${n}`, messageId: `${streamId}-m${n}`, text: `input ${n}` },
});

/** Compares two cursors in the log's read order. */
export function compareCursors(a: LogCursor, b: LogCursor): number {
  const [ta, tb] = [BigInt(a.transactionId), BigInt(b.transactionId)];
  if (ta !== tb) return ta < tb ? -1 : 1;
  return a.globalPosition - b.globalPosition;
}

/** The cursor after every event visible now (all appends that have ended, when none runs). */
export async function endOfLog(store: EventStore): Promise<LogCursor> {
  let cursor: LogCursor = { transactionId: '0', globalPosition: 0 };
  for (;;) {
    const page = await store.readAfter(cursor, { limit: 1000 });
    if (page.length === 0) return cursor;
    cursor = page[page.length - 1].cursor;
  }
}

/** How long a finishing reader waits for events it has not seen (a bound, so a miss fails the test instead of hanging it). */
const FINISH_BOUND_MS = 30_000;

/**
 * A reader that loops `readAfter` from `from` (small pages) until told to finish, then until it
 * has read the number of events it is told (or the bound passes); each event must move its cursor
 * strictly forward.
 */
export function startReader(store: EventStore, options: { from: LogCursor; partition?: number; limit?: number }) {
  const read: OrderedLogEntry[] = [];
  let cursor = options.from;
  let target: number | null = null;
  let finishingSince = 0;
  const done = (async () => {
    for (;;) {
      const page = await store.readAfter(cursor, { limit: options.limit ?? 7, ...(options.partition === undefined ? {} : { partition: options.partition }) });
      for (const entry of page) {
        if (compareCursors(entry.cursor, cursor) <= 0) throw new Error(`cursor went back: ${JSON.stringify(entry.cursor)} after ${JSON.stringify(cursor)}`);
        cursor = entry.cursor;
        read.push(entry);
      }
      if (page.length > 0) continue;
      if (target !== null && (read.length >= target || Date.now() - finishingSince > FINISH_BOUND_MS)) return read;
      await new Promise((r) => setTimeout(r, 2));
    }
  })();
  return {
    read,
    /** Reads on until it has `count` events in all; resolves with what it read. */
    finish(count: number): Promise<OrderedLogEntry[]> {
      target = count;
      finishingSince = Date.now();
      return done;
    },
  };
}
