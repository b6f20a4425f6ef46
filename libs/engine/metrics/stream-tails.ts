import type { StoredEvent } from '../../events';
import { BoundedMemo } from '../../memo';
import { type TimelineEvent, TIMELINE_TYPES, textOf, timelineEvent } from './turn-timeline';

/** The timeline's fields of one event of a tail, with what picks it out. */
interface TailEvent {
  version: number;
  executionId: string | null;
  event: TimelineEvent;
}

/** A run of a stream's events this process holds, with no gap from `from` through `through`. */
interface Tail {
  tenantId: string;
  from: number;
  through: number;
  /** Only the events of the timeline's types. */
  events: TailEvent[];
}

/** Streams held at most (the oldest dropped first), and events per stream (a longer run is dropped). */
const MAX_STREAMS = 1_000;
const MAX_EVENTS = 512;

const INPUT_TYPES: ReadonlySet<string> = new Set(['player-input.submitted@1', 'runtime.activated@1']);

/**
 * What a worker already holds of a session's log: its journal's read (the pending suffix, which
 * starts at or before the earliest pending input) and the appends it made since, as long as they
 * follow on with no gap. A committed turn's timeline is then answered from them
 * (`timeline`): the same events `readTimeline` reads, without a statement. Anything that breaks
 * the run (an append of another process in between, caught up under the lock; appends heard out
 * of order) drops the stream's tail: the timeline is read from the log then.
 */
export class StreamTails {
  private readonly tails = new BoundedMemo<string, Tail>({ maxEntries: MAX_STREAMS });

  /** A read of the stream's events, contiguous, up to its head as the read saw it. */
  read(events: readonly StoredEvent[]): void {
    if (events.length === 0) return;
    const { streamId, tenantId } = events[0];
    this.tails.delete(streamId);
    if (events.length > MAX_EVENTS || !events.every((e, i) => e.streamId === streamId && e.streamVersion === events[0].streamVersion + i)) return;
    const tail: Tail = { tenantId, from: events[0].streamVersion, through: events[0].streamVersion - 1, events: [] };
    if (this.extend(tail, events)) this.tails.set(streamId, tail);
  }

  /** Events this process appended (one append): they extend the stream's tail when they follow it directly. */
  appended(events: readonly StoredEvent[]): void {
    if (events.length === 0) return;
    const { streamId } = events[0];
    const tail = this.tails.get(streamId);
    if (!tail) return;
    if (!this.extend(tail, events) || tail.events.length > MAX_EVENTS) this.tails.delete(streamId);
  }

  /**
   * The events `readTimeline` reads for a committed execution (its input's version through the
   * commit's, the timeline's types, the execution's own), from the stream's tail; undefined when the
   * tail does not hold all of them. The stream's tail is let go once asked (the execution ended).
   */
  timeline(ref: { tenantId: string; sessionId: string; executionId: string; committedVersion: number }): TimelineEvent[] | undefined {
    const tail = this.tails.get(ref.sessionId);
    this.tails.delete(ref.sessionId);
    if (!tail || tail.tenantId !== ref.tenantId || tail.through < ref.committedVersion) return undefined;
    // the execution's input (its `submitted_version`): exactly one in the tail, else the log decides
    const inputs = tail.events.filter((e) => e.executionId === ref.executionId && INPUT_TYPES.has(e.event.type));
    if (inputs.length !== 1) return undefined;
    const from = inputs[0].version;
    return tail.events.filter((e) => e.version >= from && e.version <= ref.committedVersion && e.executionId === ref.executionId).map((e) => e.event);
  }

  /** Appends `events` to `tail` when they follow it with no gap (false, and `tail` unchanged, when not). */
  private extend(tail: Tail, events: readonly StoredEvent[]): boolean {
    if (!events.every((e, i) => e.tenantId === tail.tenantId && e.streamVersion === tail.through + 1 + i)) return false;
    for (const e of events) {
      if (TIMELINE_TYPES.has(e.type))
        tail.events.push({ version: e.streamVersion, executionId: textOf((e.data as Record<string, unknown>).executionId), event: timelineEvent(e) });
    }
    tail.through += events.length;
    return true;
  }
}
