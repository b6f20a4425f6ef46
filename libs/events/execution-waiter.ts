import { compile, z } from 'zod';
import { BoundedMemo } from '../memo';
import type { Listening, OpenDatabase } from './database';
import { type ExecutionView, executionView } from './read-models';

/** The channel migration 0010's trigger notifies (0021: a cancel too), with the execution id as payload, when an execution ends. */
export const EXECUTION_ENDED_CHANNEL = 'covel_execution_ended';

/** Longest wait one request may ask for (`waitMs`). */
export const MAX_EXECUTION_WAIT_MS = 30_000;

export type ListenState = 'idle' | 'connecting' | 'listening' | 'down' | 'closed';

export interface ExecutionWaiterOptions {
  /** Opens the one LISTEN connection of this process (`OpenDatabase.listen`). */
  listen: OpenDatabase['listen'];
  /** Reads an execution from the read model, scoped to its tenant (`ReadModels.execution`). */
  read: (tenantId: string, executionId: string) => Promise<ExecutionView | null>;
  /** While the LISTEN connection is down, the waiters' executions are read this often. */
  pollIntervalMs?: number;
  /** First delay before listening again after a lost or failed connection; doubles up to 10 s. */
  reconnectDelayMs?: number;
  logger?: { warn(message: string): void };
}

export interface ExecutionWait {
  tenantId: string;
  executionId: string;
  /** At most this long; then the current state is answered. */
  timeoutMs: number;
  /** Ends the wait early (the client went away); the wait then answers the current state. */
  signal?: AbortSignal;
  /**
   * As `signal`, without an AbortController and its EventTarget per wait (issue 33: CPU per long-poll):
   * registers the callback that ends the wait early and answers what takes it away again.
   */
  onLeave?: (leave: () => void) => () => void;
}

export interface ExecutionWatch {
  tenantId: string;
  executionId: string;
  /** Ends the watch (the job is over): `ended` then never resolves, and nothing is read. */
  signal: AbortSignal;
}

interface Waiter {
  tenantId: string;
  executionId: string;
  timer: NodeJS.Timeout | null;
  settled: boolean;
  /** A watch: its abort, and `close`, settle it without a read (nobody waits for an answer). */
  quiet?: boolean;
  resolve(view: ExecutionView | null): void;
  reject(error: unknown): void;
  detach(): void;
}

const MAX_RECONNECT_DELAY_MS = 10_000;

/** Executions this process submitted whose end it has not heard yet, kept (the oldest forgotten past it: they are read). */
export const SUBMITTED_KEPT = 10_000;
/** Ids of the last notifications heard: what a submission checks was not notified while it was appended. */
export const RECENT_NOTIFICATIONS_KEPT = 1_024;

/**
 * Taken before an execution is appended (`beforeSubmit`): the LISTEN connection that was up then
 * (its generation) and how many notifications it had heard.
 */
export interface SubmitMark {
  readonly generation: number;
  readonly heard: number;
}

interface Submitted {
  tenantId: string;
  generation: number;
}

/** The `executions` row an end notifies (migration 0027: `row_to_json`, at the commit). */
const NotifiedRow = z.object({
  execution_id: z.string(),
  tenant_id: z.string(),
  session_id: z.string(),
  turn_id: z.string(),
  status: z.enum(['queued', 'running', 'committed', 'failed', 'cancelled']),
  attempts: z.number().int(),
  worker_id: z.string().nullable(),
  submitted_version: z.number().int(),
  error_code: z.string().nullable(),
  error_message: z.string().nullable(),
  submitted_at: z.string(),
  updated_at: z.string(),
  waiting_for: z.string().nullable().optional(),
});

/**
 * `NotifiedRow` compiled (`z.compile`: a generated parser, the schema's own parse on anything it
 * refuses): every end this process waits for is parsed with it (issue 33: CPU per long-poll in the
 * API). Compiled at the first such end, not as the module loads (every process loads it).
 */
let compiledRow: typeof NotifiedRow | undefined;
const notifiedRow = () => (compiledRow ??= compile(NotifiedRow));

/**
 * What an end's notification says: the execution's id and, from migration 0027 on, its row as the
 * commit left it (tenant and view); an id alone (a row too long to notify, an older database), or a
 * payload that does not parse, is only a "look again".
 */
export function parseEndedNotification(payload: string): { executionId: string; ended?: { tenantId: string; view: ExecutionView } } {
  const { executionId, json } = notifiedId(payload);
  return { executionId, ...endedIn(json) };
}

/**
 * The execution a notification names, and its payload as JSON (undefined: an id alone, or not
 * JSON): the id is what `parseEndedNotification` answers, read without validating the row, which
 * only a process waiting for that execution needs (every process hears every end).
 */
function notifiedId(payload: string): { executionId: string; json?: unknown } {
  if (!payload.startsWith('{')) return { executionId: payload };
  let json: unknown;
  try {
    json = JSON.parse(payload);
  } catch {
    return { executionId: payload };
  }
  const id = (json as { execution_id?: unknown } | null)?.execution_id;
  return { executionId: typeof id === 'string' ? id : payload, json };
}

/** The end a notified row says (tenant and view): none for an id alone, a row that does not parse, or one not ended. */
function endedIn(json: unknown): { ended?: { tenantId: string; view: ExecutionView } } {
  if (json === undefined) return {};
  const row = notifiedRow().safeParse(json);
  if (!row.success) return {};
  const view = executionView({ ...row.data, waiting_for: row.data.waiting_for ?? null });
  return hasEnded(view) ? { ended: { tenantId: row.data.tenant_id, view } } : {};
}

export function hasEnded(view: Pick<ExecutionView, 'status'>): boolean {
  return view.status === 'committed' || view.status === 'failed' || view.status === 'cancelled';
}

/**
 * Waits for executions to end, for many callers at once, on one LISTEN connection per process
 * (opened at the first wait, kept until `close`). Each waiter has its own timer. A notification
 * that carries the ended execution's row (migration 0027) answers its tenant's waiters with it, no
 * read; one with the id alone, or a poll, only says "look again": the state is then read from the
 * read model, tenant-scoped.
 * While the connection is down, the waiters are polled every `pollIntervalMs` and the connection is
 * opened again (with a backoff); once it is back, every waiter is read once more, since
 * notifications sent meanwhile are lost.
 * A wait for an execution this process appended after its LISTEN was up (`beforeSubmit`,
 * `submittedAfter`), with nothing heard of it since on that same connection, reads nothing at
 * all: it has not ended, or this process would have heard it (issue 33: one statement per turn).
 */
export class ExecutionWaiter {
  private readonly waiters = new Map<string, Set<Waiter>>();
  private state: ListenState = 'idle';
  private listening: Listening | null = null;
  private connecting: Promise<void> | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private pollTimer: NodeJS.Timeout | null = null;
  private failures = 0;
  /** Counts the connections that reached LISTEN: a submission proves nothing across two of them. */
  private generation = 0;
  /** Notifications heard so far (any payload), and the ids of the last `RECENT_NOTIFICATIONS_KEPT` of them (a ring). */
  private heard = 0;
  private readonly recent: string[] = [];
  /** Executions this process appended while listening, whose end (or any notification of them) it has not heard since. */
  private readonly submitted = new BoundedMemo<string, Submitted>({ maxEntries: SUBMITTED_KEPT });
  private readonly pollIntervalMs: number;
  private readonly reconnectDelayMs: number;

  constructor(private readonly options: ExecutionWaiterOptions) {
    this.pollIntervalMs = options.pollIntervalMs ?? 500;
    this.reconnectDelayMs = options.reconnectDelayMs ?? 1_000;
  }

  get listenState(): ListenState {
    return this.state;
  }

  /** Waiters not answered yet. */
  get pending(): number {
    let n = 0;
    for (const set of this.waiters.values()) n += set.size;
    return n;
  }

  /**
   * The execution once it has ended (committed, failed or cancelled), or its state after `timeoutMs`; null if
   * this tenant has no such execution (answered at once).
   */
  async wait(request: ExecutionWait): Promise<ExecutionView | null> {
    const { tenantId, executionId } = request;
    if (request.timeoutMs <= 0 || this.state === 'closed' || request.signal?.aborted) return this.options.read(tenantId, executionId);
    const answer = new Promise<ExecutionView | null>((resolve, reject) => {
      const waiter: Waiter = { tenantId, executionId, timer: null, settled: false, resolve, reject, detach: () => undefined };
      waiter.timer = setTimeout(() => void this.answerNow(waiter), request.timeoutMs);
      if (request.signal) {
        const onAbort = () => void this.answerNow(waiter);
        request.signal.addEventListener('abort', onAbort, { once: true });
        waiter.detach = () => request.signal?.removeEventListener('abort', onAbort);
      } else if (request.onLeave) {
        waiter.detach = request.onLeave(() => void this.answerNow(waiter));
      }
      this.add(waiter);
    });
    // registered first, listening next, read last: an end committed at any point is seen
    await this.ensureListening();
    if (this.state !== 'listening') this.schedulePoll();
    // unless this process appended it while listening and has heard nothing of it since: then it
    // has not ended (its end would have been heard), and the registered waiter hears it when it does
    else if (this.unended(tenantId, executionId)) return answer;
    await this.recheck(executionId, { answerUnknown: true, tenantId });
    return answer;
  }

  /**
   * Before appending an execution (a player input): listening, when the connection can be made, and
   * what `submittedAfter` needs to know the append came after the LISTEN. Null when not listening.
   */
  async beforeSubmit(): Promise<SubmitMark | null> {
    await this.ensureListening();
    return this.state === 'listening' ? { generation: this.generation, heard: this.heard } : null;
  }

  /**
   * The execution `mark` was taken before is appended (its commit is done): a wait for it reads
   * nothing until its end's notification, as long as the connection listens without a gap since
   * the mark and nothing about it was heard in between. Anything this cannot prove (the connection
   * lost or replaced, more notifications meanwhile than are kept, one of them about this execution)
   * leaves the waits to read, as for an execution submitted by another process.
   */
  submittedAfter(mark: SubmitMark | null, tenantId: string, executionId: string): void {
    if (!mark || this.state !== 'listening' || mark.generation !== this.generation) return;
    const since = this.heard - mark.heard;
    if (since > RECENT_NOTIFICATIONS_KEPT) return;
    for (let n = this.heard - since; n < this.heard; n++) if (this.recent[n % RECENT_NOTIFICATIONS_KEPT] === executionId) return;
    this.submitted.set(executionId, { tenantId, generation: this.generation });
  }

  /** Proven not ended: appended here after the LISTEN, on the connection still listening, nothing heard of it since. */
  private unended(tenantId: string, executionId: string): boolean {
    const entry = this.submitted.get(executionId);
    return entry !== undefined && entry.tenantId === tenantId && entry.generation === this.generation && this.state === 'listening';
  }

  /**
   * Watches an execution for its end while a job of it runs (the worker aborts the job's model call
   * when it ends elsewhere: a cancel, another job's failure). Resolves once the watch is registered
   * and, when the connection can be made, listening: an end committed from then on is heard, and
   * one committed before is in what the caller reads next (its fenced appends check the log). So,
   * unlike `wait`, nothing is read now: while listening, a watch costs no statement until its
   * execution's notification; while the connection is down, watches are polled like waits.
   * `ended` resolves with the execution once it has ended; never, if the watch is ended first.
   */
  async watch(request: ExecutionWatch): Promise<{ ended: Promise<ExecutionView> }> {
    const { tenantId, executionId, signal } = request;
    if (this.state === 'closed' || signal.aborted) return { ended: new Promise<ExecutionView>(() => undefined) };
    const ended = new Promise<ExecutionView>((resolve, reject) => {
      const waiter: Waiter = {
        tenantId,
        executionId,
        timer: null,
        settled: false,
        quiet: true,
        resolve: (view) => (view ? resolve(view) : undefined),
        reject,
        detach: () => undefined,
      };
      const onAbort = () => this.remove(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
      waiter.detach = () => signal.removeEventListener('abort', onAbort);
      this.add(waiter);
    });
    // a failed read of a watched execution is logged by `recheck`; the watch goes on
    ended.catch(() => undefined);
    await this.ensureListening();
    if (this.state !== 'listening') this.schedulePoll();
    return { ended };
  }

  /** Answers every waiter with its current state and ends the LISTEN connection. */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    if (this.pollTimer) clearTimeout(this.pollTimer);
    this.reconnectTimer = this.pollTimer = null;
    this.submitted.clear();
    await this.connecting;
    const listening = this.listening;
    this.listening = null;
    await listening?.close().catch(() => undefined);
    const all = [...this.waiters.values()].flatMap((set) => [...set]);
    await Promise.all(all.map((w) => (w.quiet ? this.remove(w) : this.answerNow(w))));
  }

  /** A method, not a comparison: the state changes across awaits. */
  private isClosed(): boolean {
    return this.state === 'closed';
  }

  private add(waiter: Waiter) {
    const set = this.waiters.get(waiter.executionId) ?? new Set<Waiter>();
    set.add(waiter);
    this.waiters.set(waiter.executionId, set);
  }

  /** Takes the waiter out of the map and clears its timer; false if it was answered already. */
  private remove(waiter: Waiter): boolean {
    if (waiter.settled) return false;
    waiter.settled = true;
    if (waiter.timer) clearTimeout(waiter.timer);
    waiter.detach();
    const set = this.waiters.get(waiter.executionId);
    set?.delete(waiter);
    if (set?.size === 0) this.waiters.delete(waiter.executionId);
    return true;
  }

  private async answerNow(waiter: Waiter) {
    if (!this.remove(waiter)) return;
    try {
      waiter.resolve(await this.options.read(waiter.tenantId, waiter.executionId));
    } catch (error) {
      waiter.reject(error);
    }
  }

  /**
   * Reads the execution once per tenant waiting for it and answers the waiters if it has ended (or,
   * with `answerUnknown`, if the tenant has no such execution). A failed read leaves the waiters to
   * their timers, unless it is the first read of a wait. A wait's first read is its tenant's only
   * (the others' waiters read theirs when they start, or wait for the notification).
   */
  private async recheck(executionId: string, options: { answerUnknown?: boolean; tenantId?: string } = {}) {
    const set = this.waiters.get(executionId);
    if (!set) return;
    const tenants = options.tenantId === undefined ? new Set([...set].map((w) => w.tenantId)) : [options.tenantId];
    await Promise.all(
      [...tenants].map(async (tenantId) => {
        let view: ExecutionView | null;
        try {
          view = await this.options.read(tenantId, executionId);
        } catch (error) {
          if (options.answerUnknown) this.rejectAll(executionId, tenantId, error);
          else this.options.logger?.warn(`reading execution ${executionId} for its waiters failed: ${String(error)}`);
          return;
        }
        if (view === null ? !options.answerUnknown : !hasEnded(view)) return;
        for (const w of [...(this.waiters.get(executionId) ?? [])]) {
          // a watch hears of an end only (an unknown execution is a wait's answer)
          if (w.tenantId === tenantId && (view !== null || !w.quiet) && this.remove(w)) w.resolve(view);
        }
      }),
    );
  }

  /** An end's notification: the row it carries answers that execution's waiters of its tenant; an id alone has them read. */
  private notified(payload: string) {
    const { executionId, json } = notifiedId(payload);
    this.recent[this.heard % RECENT_NOTIFICATIONS_KEPT] = executionId;
    this.heard++;
    // whatever it says (an end, or only "look again"), a wait for it reads from now on
    this.submitted.delete(executionId);
    // the row is read only for this process's waiters of it (issue 33: every process hears every end)
    if (!this.waiters.has(executionId)) return;
    const { ended } = endedIn(json);
    if (!ended) return void this.recheck(executionId);
    // the row answers its own tenant's waiters only: another tenant's first read answers them (null)
    for (const w of [...(this.waiters.get(executionId) ?? [])]) {
      if (w.tenantId === ended.tenantId && this.remove(w)) w.resolve(ended.view);
    }
  }

  private rejectAll(executionId: string, tenantId: string, error: unknown) {
    for (const w of [...(this.waiters.get(executionId) ?? [])]) {
      if (w.tenantId === tenantId && !w.quiet && this.remove(w)) w.reject(error);
    }
  }

  private ensureListening(): Promise<void> {
    if (this.state === 'idle') this.connecting ??= this.connect();
    return this.connecting ?? Promise.resolve();
  }

  private async connect(): Promise<void> {
    const wasDown = this.state === 'down';
    this.state = 'connecting';
    try {
      const listening = await this.options.listen(EXECUTION_ENDED_CHANNEL, (payload) => this.notified(payload), { onLost: (e) => this.lost(e) });
      if (this.isClosed()) {
        await listening.close();
        return;
      }
      this.listening = listening;
      this.state = 'listening';
      this.generation++;
      this.failures = 0;
      if (this.pollTimer) clearTimeout(this.pollTimer);
      this.pollTimer = null;
      // notifications sent while it was down are gone: look at every waiter once (not awaited: a
      // loss during these reads must find no connect in progress, or it would schedule none)
      if (wasDown) for (const id of [...this.waiters.keys()]) void this.recheck(id);
    } catch (error) {
      if (this.isClosed()) return;
      this.options.logger?.warn(`cannot LISTEN for ended executions (polling meanwhile): ${String(error)}`);
      this.state = 'down';
      this.failures++;
      this.scheduleReconnect();
      this.schedulePoll();
    } finally {
      this.connecting = null;
    }
  }

  private lost(error: Error) {
    if (this.state === 'closed') return;
    this.options.logger?.warn(`the LISTEN connection for ended executions was lost (polling meanwhile): ${error.message}`);
    this.listening = null;
    this.state = 'down';
    // notifications may be lost from here on: nothing submitted before is known not to have ended
    this.submitted.clear();
    this.scheduleReconnect();
    this.schedulePoll();
  }

  private scheduleReconnect() {
    if (this.reconnectTimer || this.state === 'closed') return;
    const delay = Math.min(this.reconnectDelayMs * 2 ** Math.max(0, this.failures - 1), MAX_RECONNECT_DELAY_MS);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (this.state === 'down') this.connecting ??= this.connect();
    }, delay);
    this.reconnectTimer.unref();
  }

  /** The fallback: while not listening, each waited-for execution is read every `pollIntervalMs`. */
  private schedulePoll() {
    if (this.pollTimer || this.state === 'closed' || this.state === 'listening') return;
    this.pollTimer = setTimeout(() => {
      void (async () => {
        if (this.state === 'listening' || this.state === 'closed') {
          this.pollTimer = null;
          return;
        }
        await Promise.all([...this.waiters.keys()].map((id) => this.recheck(id)));
        this.pollTimer = null;
        if (this.waiters.size > 0) this.schedulePoll();
      })();
    }, this.pollIntervalMs);
    this.pollTimer.unref();
  }
}
