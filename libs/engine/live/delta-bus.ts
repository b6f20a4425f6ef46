import { DeltaCoalescer } from './coalescer';

/**
 * Story text as it streams from a model, between the worker that calls the model and the API
 * processes that serve `GET /v1/sessions/:id/events`.
 *
 * Why not the log: deltas are transient and frequent (up to 20 a second per call, coalesced from
 * the model's chunks). The append-only log keeps what a turn did (the call's request in
 * `llm.calling@1`, its whole reply in `llm.responded@1`, the committed messages); writing every
 * delta there would multiply the log and the replay/audit work for text the reply records whole. So deltas go through a bus:
 * in-process in the embedded default, Redis pub/sub when the worker and the API are separate
 * processes. Each call's deltas are also kept for a while (`recent`) so a stream that resumes in
 * the middle of a call gets the ones it missed; once the call has ended its text is in the log.
 */
export interface StoryDelta {
  sessionId: string;
  /** The `callId` of the call's `llm.calling@1`. */
  callId: string;
  /** 1, 2, 3… within the call. */
  seq: number;
  text: string;
}

/** The text stream of one model call, as the worker writes it. */
export interface CallDeltas {
  /** Fire and forget: the model's stream never waits for its readers (a failure is logged). */
  write(text: string): void;
  /**
   * The call has ended (its reply is about to be recorded): what was written and not published yet
   * goes now, so the last delta precedes the reply; then its kept deltas may go. Never rejects.
   */
  end(): Promise<void>;
}

export interface DeltaBus {
  /**
   * A model call's stream: its text, coalesced (`DeltaCoalescer`: at most one delta per 50 ms or
   * 400 characters), published as deltas numbered 1, 2, 3… while someone listens to the session.
   */
  open(call: { sessionId: string; callId: string }): CallDeltas;
  /**
   * The deltas of a session as they are published, from now on; resolves (to its unsubscribe) once
   * they are heard, and the session counts as listened to (its calls publish) while it is held.
   */
  subscribe(sessionId: string, onDelta: (delta: StoryDelta) => void): Promise<() => Promise<void>>;
  /** The deltas of a call still kept, in order (none once it has ended and its grace has passed). */
  recent(callId: string): Promise<StoryDelta[]>;
  close(): Promise<void>;
}

/** How long the deltas of an ended call stay readable (a reader may still be reading the log up to its end). */
export const FINISHED_CALL_GRACE_MS = 60_000;
/** How long the deltas of a call stay kept at most (a worker that died mid-call never finishes it). */
export const CALL_DELTAS_TTL_MS = 30 * 60_000;

/** The bus of the embedded default (API and worker in one process). */
export class InProcessDeltaBus implements DeltaBus {
  private readonly listeners = new Map<string, Set<(delta: StoryDelta) => void>>();
  private readonly kept = new Map<string, { deltas: StoryDelta[]; timer: NodeJS.Timeout }>();

  /** Keeps every call's deltas whether or not anyone listens: in memory they cost no round trip (and `keepPartial` has them). */
  open(call: { sessionId: string; callId: string }): CallDeltas {
    let seq = 0;
    const coalescer = new DeltaCoalescer({ emit: (text) => this.publish({ ...call, seq: ++seq, text }) });
    return {
      write: (text) => coalescer.write(text),
      end: () => {
        const rest = coalescer.end();
        if (rest !== '') this.publish({ ...call, seq: ++seq, text: rest });
        this.finish(call.callId);
        return Promise.resolve();
      },
    };
  }

  /** One delta, as is (the calls' streams publish through this; tests may too). */
  publish(delta: StoryDelta): void {
    let entry = this.kept.get(delta.callId);
    if (!entry) {
      entry = { deltas: [], timer: this.expire(delta.callId, CALL_DELTAS_TTL_MS) };
      this.kept.set(delta.callId, entry);
    }
    entry.deltas.push(delta);
    for (const listener of this.listeners.get(delta.sessionId) ?? []) listener(delta);
  }

  private finish(callId: string): void {
    const entry = this.kept.get(callId);
    if (!entry) return;
    clearTimeout(entry.timer);
    entry.timer = this.expire(callId, FINISHED_CALL_GRACE_MS);
  }

  subscribe(sessionId: string, onDelta: (delta: StoryDelta) => void): Promise<() => Promise<void>> {
    let set = this.listeners.get(sessionId);
    if (!set) this.listeners.set(sessionId, (set = new Set()));
    const listener = (delta: StoryDelta) => onDelta(delta);
    set.add(listener);
    return Promise.resolve(async () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(sessionId);
    });
  }

  recent(callId: string): Promise<StoryDelta[]> {
    return Promise.resolve([...(this.kept.get(callId)?.deltas ?? [])]);
  }

  close(): Promise<void> {
    for (const entry of this.kept.values()) clearTimeout(entry.timer);
    this.kept.clear();
    this.listeners.clear();
    return Promise.resolve();
  }

  private expire(callId: string, ms: number): NodeJS.Timeout {
    const timer = setTimeout(() => this.kept.delete(callId), ms);
    timer.unref();
    return timer;
  }
}
