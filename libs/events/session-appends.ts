import type { Listening, OpenDatabase } from './database';
import type { ListenState } from './execution-waiter';

/** The channel migration 0023's trigger notifies, with the stream id as payload, when events are appended to a stream. */
export const SESSION_APPENDED_CHANNEL = 'covel_session_appended';

export interface SessionAppendsOptions {
  /** Opens the one LISTEN connection of this process for the channel (`OpenDatabase.listen`). */
  listen: OpenDatabase['listen'];
  /** While the LISTEN connection is down, every subscriber is woken this often (it then reads the log). */
  fallbackIntervalMs?: number;
  /** First delay before listening again after a lost or failed connection; doubles up to 10 s. */
  reconnectDelayMs?: number;
  logger?: { warn(message: string): void };
}

const MAX_RECONNECT_DELAY_MS = 10_000;

/**
 * Tells the readers of a stream that it was appended to, for many readers at once, on one LISTEN
 * connection per process (opened at the first subscription, kept until `close`): the notifications
 * of the events table's trigger (migration 0023, sent at each append's commit, in PGlite as in
 * PostgreSQL) are fanned out to the subscribers of that stream id. A wake only says "read again":
 * what is read is the reader's business (tenant-scoped there). While the connection is down,
 * every subscriber is woken every `fallbackIntervalMs`, and the connection is opened again (with a
 * backoff); once it is back, every subscriber is woken once, since notifications sent meanwhile
 * are lost. Idle subscribers cost no statement and no timer.
 */
export class SessionAppends {
  private readonly subscribers = new Map<string, Set<() => void>>();
  /** Subscribers of every stream (the async projector: any append is work for it). */
  private readonly everyStream = new Set<() => void>();
  private state: ListenState = 'idle';
  private listening: Listening | null = null;
  private connecting: Promise<void> | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private fallbackTimer: NodeJS.Timeout | null = null;
  private failures = 0;
  private readonly fallbackIntervalMs: number;
  private readonly reconnectDelayMs: number;

  constructor(private readonly options: SessionAppendsOptions) {
    this.fallbackIntervalMs = options.fallbackIntervalMs ?? 1_000;
    this.reconnectDelayMs = options.reconnectDelayMs ?? 1_000;
  }

  get listenState(): ListenState {
    return this.state;
  }

  /** Subscriptions held (every stream's), for metrics and leak checks. */
  get size(): number {
    let n = this.everyStream.size;
    for (const set of this.subscribers.values()) n += set.size;
    return n;
  }

  /**
   * Calls `onAppend` after each commit that appends to `streamId`, from now on. Resolves, once the
   * subscription is registered and (when the connection can be made) listening, to its end (which
   * removes it at once): an append committed from then on wakes it, one committed before is in what
   * the caller reads next.
   */
  async subscribe(streamId: string, onAppend: () => void): Promise<() => void> {
    if (this.state === 'closed') return () => undefined;
    let set = this.subscribers.get(streamId);
    if (!set) this.subscribers.set(streamId, (set = new Set()));
    const subscriber = () => onAppend();
    set.add(subscriber);
    return this.listened(() => {
      set.delete(subscriber);
      if (set.size === 0 && this.subscribers.get(streamId) === set) this.subscribers.delete(streamId);
    });
  }

  /** Like `subscribe`, for the appends to every stream (one call per notification: a burst of appends is a burst of calls, the caller coalesces). */
  async subscribeAll(onAppend: () => void): Promise<() => void> {
    if (this.state === 'closed') return () => undefined;
    const subscriber = () => onAppend();
    this.everyStream.add(subscriber);
    return this.listened(() => this.everyStream.delete(subscriber));
  }

  /** Listens (when the connection can be made) for a subscription just registered; resolves to its end. */
  private async listened(remove: () => void): Promise<() => void> {
    const unsubscribe = () => {
      remove();
      if (this.size === 0 && this.fallbackTimer) {
        clearTimeout(this.fallbackTimer);
        this.fallbackTimer = null;
      }
    };
    if (this.state === 'idle') this.connecting ??= this.connect();
    await this.connecting;
    if (this.state === 'down') this.scheduleFallback();
    return unsubscribe;
  }

  /** Ends the LISTEN connection; subscribers are forgotten (their owners stop them). */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    if (this.fallbackTimer) clearTimeout(this.fallbackTimer);
    this.reconnectTimer = this.fallbackTimer = null;
    await this.connecting;
    const listening = this.listening;
    this.listening = null;
    this.subscribers.clear();
    this.everyStream.clear();
    await listening?.close().catch(() => undefined);
  }

  private notify(streamId: string): void {
    for (const subscriber of [...(this.subscribers.get(streamId) ?? []), ...this.everyStream]) subscriber();
  }

  private wakeAll(): void {
    for (const set of [...this.subscribers.values(), this.everyStream]) for (const subscriber of [...set]) subscriber();
  }

  /** A method, not a comparison: the state changes across awaits. */
  private isClosed(): boolean {
    return this.state === 'closed';
  }

  private async connect(): Promise<void> {
    const wasDown = this.state === 'down';
    this.state = 'connecting';
    try {
      const listening = await this.options.listen(SESSION_APPENDED_CHANNEL, (streamId) => this.notify(streamId), { onLost: (e) => this.lost(e) });
      if (this.isClosed()) {
        await listening.close();
        return;
      }
      this.listening = listening;
      this.state = 'listening';
      this.failures = 0;
      if (this.fallbackTimer) clearTimeout(this.fallbackTimer);
      this.fallbackTimer = null;
      // appends notified while it was down are unheard: every subscriber reads once more
      if (wasDown) this.wakeAll();
    } catch (error) {
      if (this.isClosed()) return;
      this.options.logger?.warn(`cannot LISTEN for session appends (event streams poll meanwhile): ${String(error)}`);
      this.state = 'down';
      this.failures++;
      this.scheduleReconnect();
      this.scheduleFallback();
    } finally {
      this.connecting = null;
    }
  }

  private lost(error: Error): void {
    if (this.state === 'closed') return;
    this.options.logger?.warn(`the LISTEN connection for session appends was lost (event streams poll meanwhile): ${error.message}`);
    this.listening = null;
    this.state = 'down';
    this.scheduleReconnect();
    this.scheduleFallback();
  }

  private scheduleReconnect(): void {
    if (this.reconnectTimer || this.state === 'closed') return;
    const delay = Math.min(this.reconnectDelayMs * 2 ** Math.max(0, this.failures - 1), MAX_RECONNECT_DELAY_MS);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (this.state === 'down') this.connecting ??= this.connect();
    }, delay);
    this.reconnectTimer.unref();
  }

  /** The fallback: while not listening, every subscriber is woken every `fallbackIntervalMs`. */
  private scheduleFallback(): void {
    if (this.fallbackTimer || this.state !== 'down' || this.size === 0) return;
    this.fallbackTimer = setTimeout(() => {
      this.fallbackTimer = null;
      if (this.state !== 'down') return;
      this.wakeAll();
      this.scheduleFallback();
    }, this.fallbackIntervalMs);
    this.fallbackTimer.unref();
  }
}
