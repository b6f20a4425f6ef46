/** How often a call's text is published at most: a reader sees it move ~20 times a second, as smooth as a person reads. */
export const DELTA_WINDOW_MS = 50;
/**
 * Text that is published at once, without waiting for the window to pass: a fast model (or a
 * burst after a stall) writes a paragraph in a few milliseconds; ~400 characters is about what a
 * reader's eye takes in at once (a short paragraph, ~70 words), so a burst reaches the screen
 * a paragraph at a time, and no message outgrows what pub/sub moves in one small frame.
 */
export const DELTA_MAX_CHARS = 400;

/** The clock of a coalescer (tests pass a fake one). */
export interface CoalescerClock {
  now(): number;
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(timer: unknown): void;
}

export const systemClock: CoalescerClock = {
  now: () => Date.now(),
  setTimeout: (run, ms) => {
    const timer = setTimeout(run, ms);
    timer.unref();
    return timer;
  },
  clearTimeout: (timer) => clearTimeout(timer as NodeJS.Timeout),
};

export interface CoalescerOptions {
  /** Publishes one piece (the writes since the last one, concatenated as they came). */
  emit: (text: string) => void;
  windowMs?: number;
  maxChars?: number;
  clock?: CoalescerClock;
  /** False: the writes are kept, nothing is emitted until `start` (nobody listens yet). Default true. */
  started?: boolean;
}

/**
 * Gathers the text of one model call's stream into fewer, larger pieces: at most one per window
 * (the first write after a quiet window goes at once, the ones within the window wait for its end),
 * and at once when `maxChars` have gathered. Pieces are the writes concatenated as they came, never
 * cut: their concatenation is the text written, and a piece never ends between the two halves of a
 * surrogate pair (a lone high surrogate at the end waits for its pair in the next piece).
 * Not started (nobody listens): everything written is kept; `start` emits it as one piece (the
 * catch-up of a listener that arrived mid-call) and coalesces from then on.
 */
export class DeltaCoalescer {
  private pending = '';
  private lastEmit = Number.NEGATIVE_INFINITY;
  private timer: unknown = null;
  private started: boolean;
  private ended = false;
  private readonly windowMs: number;
  private readonly maxChars: number;
  private readonly clock: CoalescerClock;

  constructor(private readonly options: CoalescerOptions) {
    this.windowMs = options.windowMs ?? DELTA_WINDOW_MS;
    this.maxChars = options.maxChars ?? DELTA_MAX_CHARS;
    this.clock = options.clock ?? systemClock;
    this.started = options.started ?? true;
  }

  get isStarted(): boolean {
    return this.started;
  }

  write(text: string): void {
    if (this.ended || text === '') return;
    this.pending += text;
    if (!this.started) return;
    const wait = this.lastEmit + this.windowMs - this.clock.now();
    if (wait <= 0 || this.pending.length >= this.maxChars) this.emit();
    else this.timer ??= this.clock.setTimeout(() => this.onTimer(), wait);
  }

  /** A listener arrived: what was written so far goes now, as one piece; later writes are coalesced. */
  start(): void {
    if (this.started || this.ended) return;
    this.started = true;
    this.emit();
  }

  /**
   * The call ended: nothing is emitted from now on. Returns the rest, not emitted yet (for the
   * caller to publish as the last piece, with whatever ends the call); '' when not started.
   */
  end(): string {
    if (this.ended) return '';
    const rest = this.started ? this.pending : '';
    this.ended = true;
    this.clearTimer();
    this.pending = '';
    return rest;
  }

  private onTimer(): void {
    this.timer = null;
    if (!this.ended) this.emit();
  }

  private emit(): void {
    this.clearTimer();
    let text = this.pending;
    // a high surrogate waits for its low half (the next write, or the rest at the end)
    if (isHighSurrogate(text.charCodeAt(text.length - 1))) text = text.slice(0, -1);
    if (text === '') return;
    this.pending = this.pending.slice(text.length);
    this.lastEmit = this.clock.now();
    this.options.emit(text);
  }

  private clearTimer(): void {
    if (this.timer === null) return;
    this.clock.clearTimeout(this.timer);
    this.timer = null;
  }
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
