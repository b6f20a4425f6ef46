import type { MessageEvent } from '@nestjs/common';
import type { DeltaBus, StoryDelta } from '../../../libs/engine';
import { type EventStore, isEventType, type StoredEvent } from '../../../libs/events';
import { clientEvent } from './client-events';
import { deltaEventId, logEventId, type ResumePoint } from './event-id';

/** Wakes a feed when its session's log was appended to (`SessionAppends`: one LISTEN per process). */
export interface AppendWakes {
  subscribe(sessionId: string, onAppend: () => void): Promise<() => void>;
}

export interface SessionFeedOptions {
  store: Pick<EventStore, 'readLog'>;
  deltas: Pick<DeltaBus, 'subscribe' | 'recent'>;
  /** Wakes the feed at each append to the session: an idle feed reads nothing until then. */
  appends: AppendWakes;
  sessionId: string;
  /** `Last-Event-ID`, read (null: from `startAfter`). */
  resume: ResumePoint | null;
  /** Without `resume`: the stream sends the shown log events after this global position (0: the whole session). */
  startAfter?: number;
  /** Writes one event (or comment) to the client. */
  send: (message: MessageEvent) => void;
  /**
   * The safety net: an idle feed reads the log this often even unwoken (appends and the session's
   * deltas wake it at once; while the LISTEN connection is down `appends` wakes it as often as it polls).
   */
  pollIntervalMs: number;
  /** A comment line this often keeps proxies and the client from closing an idle stream. */
  heartbeatMs: number;
  /**
   * Asked at each heartbeat whether the stream may go on (its API key not revoked); false: the feed
   * stops (the stream ends). A failed check lets it go on (the next heartbeat asks again).
   */
  stillAllowed?: () => Promise<boolean>;
  /** Log entries read per round trip. */
  batchSize?: number;
  onError: (error: unknown) => void;
}

/** A model call whose deltas are being sent: its `llm.calling@1` was sent, its end not read yet. */
interface OpenCall {
  position: number;
  callId: string;
  executionId: string;
  turnId: string;
  pluginId: string;
  runtimeId: string;
  /** The last delta sent (or, resumed from `<position>-<seq>`, the last one the client had). */
  lastSeq: number;
}

/** Deltas kept for calls whose `llm.calling@1` this feed has not reached yet (pub/sub can be ahead of the log). */
const EARLY_DELTAS_LIMIT = 10_000;
const ENDED_CALLS_KEPT = 100;

/**
 * One client's stream of a session: the session's log, in order, by global position, read from
 * the database (so any API process serves any session, and a resumed stream misses nothing), with
 * the story text of each streamed model call spliced in right after that call's `llm.calling@1`.
 *
 * While a call streams, the log events after it are held back until the log records the call's
 * end (its reply, a failure, a newer attempt, or the next event of the same runtime), then sent in
 * order, after the call's deltas the bus kept that the feed has not heard yet (published before
 * the end was recorded, pub/sub may bring them after the log shows it). So every id the client
 * sees is in one order (`P`, `P-1`, `P-2`…, then positions after P), and `Last-Event-ID` resumes exactly:
 *  - `P` (a log event): every shown log event after P, once; the deltas of a call that starts
 *    after P and still streams, from its first (those already published are read from the bus's
 *    keep of the call);
 *  - `P-n` (a delta): the call at P continues after its n-th delta (the ones the bus still keeps,
 *    even when the call has ended meanwhile: the client was in the middle of its text), then
 *    every shown log event after P, once.
 * Any other call that has ended by the time the stream reaches it sends no deltas: its text is in
 * its `call-ended`/`committed` events. Deltas are live data: they are never read from the log.
 *
 * Without a resume point the feed starts after `startAfter` (the API passes the session's latest
 * committed turn, or the whole session on `?from=0`). Once caught up it reads nothing until woken:
 * by an append to the session (`appends`, the log's own notification at commit), or by a delta of
 * a call it has not read yet; `pollIntervalMs` is only a safety net.
 */
export class SessionFeed {
  private cursor: number;
  /** Read, not sent yet (held behind an open call). */
  private readonly queue: StoredEvent[] = [];
  private open: OpenCall | null = null;
  /**
   * The open call whose end the last read found: before the events after it go, its deltas the bus
   * kept and this feed has not heard (pub/sub is not the log's road: one can come after the end).
   */
  private closing: OpenCall | null = null;
  /** Set when resumed from `P-n`: the log event P is not sent again, its call reopens after delta n. */
  private reopen: ResumePoint | null;
  private readonly early = new Map<string, StoryDelta[]>();
  private earlyCount = 0;
  /** Calls seen ending: a late delta of theirs is dropped. */
  private readonly ended = new Set<string>();
  private stopped = false;
  /** Woken (an append, an early delta) since the last read began: read again before idling. */
  private dirty = false;
  private wake: (() => void) | null = null;
  private unsubscribe: (() => Promise<void>) | null = null;
  private unlisten: (() => void) | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private heard!: () => void;
  /**
   * Resolves once the feed hears its session (see `run`), or has ended without: a stream is opened
   * to its client (headers sent) only then, so every delta published after it looks open reaches it.
   */
  readonly ready = new Promise<void>((resolve) => (this.heard = resolve));

  constructor(private readonly options: SessionFeedOptions) {
    const resume = options.resume;
    this.reopen = resume && resume.seq !== null ? resume : null;
    // resumed from a delta: its call's event is read again (not sent) to know the call
    this.cursor = resume ? (this.reopen ? resume.position - 1 : resume.position) : (options.startAfter ?? 0);
  }

  /** Runs until `stop` (or a failure, handed to `onError`). */
  async run(): Promise<void> {
    try {
      // before the first read: a delta published while the log is read is not lost (and from
      // here on its publishers see the listener, the bus's subscription is acknowledged)
      this.unsubscribe = await this.options.deltas.subscribe(this.options.sessionId, (delta) => this.onDelta(delta));
      if (this.stopped) return;
      // and to the log's appends: one committed after this is heard, one before is read below
      this.unlisten = await this.options.appends.subscribe(this.options.sessionId, () => this.poke());
      if (this.stopped) return;
      this.heard();
      this.heartbeat = setInterval(() => this.beat(), this.options.heartbeatMs);
      this.heartbeat.unref();
      while (!this.stopped) {
        this.dirty = false;
        const read = await this.readMore();
        await this.drain();
        if (!read && !this.dirty && !this.stopped) await this.idle();
      }
    } catch (error) {
      if (!this.stopped) this.options.onError(error);
    } finally {
      this.heard();
      await this.release();
    }
  }

  stop(): void {
    this.stopped = true;
    this.wake?.();
  }

  private checking = false;

  private beat(): void {
    this.options.send({ comment: 'heartbeat' });
    const stillAllowed = this.options.stillAllowed;
    if (!stillAllowed || this.checking || this.stopped) return;
    this.checking = true;
    void stillAllowed()
      .then((allowed) => {
        if (!allowed) this.stop();
      })
      .catch(() => undefined)
      .finally(() => (this.checking = false));
  }

  /** Drops what the feed holds (a stopped feed may stay referenced a while: its buffers do not). */
  private async release(): Promise<void> {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    this.unlisten?.();
    this.unlisten = null;
    this.wake = null;
    this.queue.length = 0;
    this.early.clear();
    this.earlyCount = 0;
    this.ended.clear();
    this.open = null;
    this.closing = null;
    const unsubscribe = this.unsubscribe;
    this.unsubscribe = null;
    await unsubscribe?.().catch(() => undefined);
  }

  /** Reads the next entries of the session's log into the queue; false when there were none. */
  private async readMore(): Promise<boolean> {
    const limit = this.options.batchSize ?? 200;
    const entries = await this.options.store.readLog(this.cursor, limit, { streamId: this.options.sessionId });
    for (const entry of entries) {
      this.cursor = entry.globalPosition;
      if (!isEventType(entry.type)) continue; // a type this build does not know: not shown
      const event = entry.decode();
      if (this.reopen && event.globalPosition <= this.reopen.position) {
        if (event.globalPosition === this.reopen.position && event.type === 'llm.calling@1') this.queue.push(event);
        else if (event.globalPosition === this.reopen.position) this.reopen = null;
        continue;
      }
      if (this.open && ends(this.open, event)) {
        this.closing = this.open; // its last deltas are sent (`endCall`), then its end
        this.open = null;
      }
      this.queue.push(event);
    }
    return entries.length > 0;
  }

  /** Sends what the queue holds, in order, up to a call that still streams. */
  private async drain(): Promise<void> {
    if (this.closing) await this.endCall(this.closing);
    while (!this.open && this.queue.length > 0 && !this.stopped) {
      const event = this.queue.shift()!;
      const resumed = this.reopen !== null && event.globalPosition === this.reopen.position ? this.reopen : null;
      if (resumed) this.reopen = null;
      else this.sendLog(event);
      if (event.type !== 'llm.calling@1') continue;
      const { executionId, turnId, callId, pluginId, runtimeId } = event.data;
      const call: OpenCall = { position: event.globalPosition, executionId, turnId, callId, pluginId, runtimeId, lastSeq: resumed?.seq ?? 0 };
      if (this.queue.some((later) => ends(call, later))) {
        // ended already: its text is in the log; but a client resumed in the middle of it gets the
        // rest of its text first (kept a while after the end for this), so its text is never cut short
        if (resumed) this.sendAll(call, await this.options.deltas.recent(call.callId));
        this.markEnded(callId);
        continue;
      }
      await this.catchUp(call);
    }
  }

  /**
   * Sends the deltas of a call published before the feed reached it (kept by the bus, and those
   * heard meanwhile), in order, then opens it for live ones. Until it is open, live deltas of the
   * call wait in `early` (no await between the merge and the opening: none is sent out of order).
   */
  private async catchUp(call: OpenCall): Promise<void> {
    await this.sendKept(call);
    this.dropEarly(call.callId);
    this.open = call;
  }

  /**
   * The log shows the end of the open call: the deltas of it the bus kept that this feed has not
   * sent (published before the end was recorded, still on their way here through pub/sub) go now,
   * before its end, and the live ones stop (later ones are dropped: its text is in the log). A live
   * delta heard meanwhile waits in `early`, as in `catchUp`.
   */
  private async endCall(call: OpenCall): Promise<void> {
    await this.sendKept(call);
    this.closing = null;
    this.markEnded(call.callId);
  }

  /** Sends the call's deltas the bus keeps and those heard while it was asked, the ones not sent yet. */
  private async sendKept(call: OpenCall): Promise<void> {
    const kept = await this.options.deltas.recent(call.callId);
    this.sendAll(call, [...kept, ...(this.early.get(call.callId) ?? [])]);
  }

  /** Sends deltas of a call in order, each once (by seq; the ones the client has are skipped). */
  private sendAll(call: OpenCall, deltas: readonly StoryDelta[]): void {
    const bySeq = new Map<number, StoryDelta>();
    for (const delta of deltas) bySeq.set(delta.seq, delta);
    for (const seq of [...bySeq.keys()].sort((a, b) => a - b)) this.sendDelta(call, bySeq.get(seq)!);
  }

  private onDelta(delta: StoryDelta): void {
    if (delta.sessionId !== this.options.sessionId || this.ended.has(delta.callId)) return;
    if (this.open?.callId === delta.callId) {
      this.sendDelta(this.open, delta);
      return;
    }
    // a call the log has not shown yet (or one already over: dropped when its event is read)
    const list = this.early.get(delta.callId) ?? [];
    list.push(delta);
    this.early.set(delta.callId, list);
    if (++this.earlyCount > EARLY_DELTAS_LIMIT) {
      const oldest = this.early.keys().next().value;
      if (oldest !== undefined) this.dropEarly(oldest);
    }
    this.poke(); // the call's event is in the log by now
  }

  /** Something may be new in the log: read it (now if idle, else right after the current read). */
  private poke(): void {
    this.dirty = true;
    this.wake?.();
  }

  private markEnded(callId: string): void {
    this.dropEarly(callId);
    this.ended.add(callId);
    if (this.ended.size > ENDED_CALLS_KEPT) this.ended.delete(this.ended.values().next().value!);
  }

  private dropEarly(callId: string): void {
    this.earlyCount -= this.early.get(callId)?.length ?? 0;
    this.early.delete(callId);
  }

  private sendDelta(call: OpenCall, delta: StoryDelta): void {
    if (delta.seq <= call.lastSeq || this.stopped) return; // sent already (or the client had it)
    call.lastSeq = delta.seq;
    const { executionId, turnId, callId, pluginId, runtimeId } = call;
    this.options.send({
      id: deltaEventId(call.position, delta.seq),
      type: 'delta',
      data: { executionId, turnId, callId, pluginId, runtimeId, seq: delta.seq, text: delta.text },
    });
  }

  private sendLog(event: StoredEvent): void {
    const shown = clientEvent(event);
    if (shown) this.options.send({ id: logEventId(event.globalPosition), type: shown.type, data: shown.data });
  }

  private idle(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
      const timer = setTimeout(done, this.options.pollIntervalMs);
      this.wake = done;
    });
  }
}

/** The log has recorded the end of this call: its reply, a fallback, a failure, a stop, a commit, a newer attempt, or the runtime's next event. */
function ends(call: Pick<OpenCall, 'executionId' | 'pluginId' | 'runtimeId'>, event: StoredEvent): boolean {
  const data = event.data as { executionId?: unknown; pluginId?: unknown; runtimeId?: unknown };
  if (data.executionId !== call.executionId) return false;
  const end = ['turn.committed@1', 'execution.failed@1', 'execution.cancelled@1', 'execution.started@1'];
  if (end.includes(event.type)) return true;
  return data.pluginId === call.pluginId && data.runtimeId === call.runtimeId;
}
