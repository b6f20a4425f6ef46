import { linkedSignal } from './linked-signal';
import { type ModelResponse, type ProviderAdapter, ProviderError, type SendOptions } from './types';

/** How long one model call may wait for its provider (a slot's `firstByteTimeoutMs`, `idleTimeoutMs`, `totalTimeoutMs`). */
export interface CallDeadlines {
  /** Streamed calls: from the send to the first event of the stream. */
  firstByteMs: number;
  /** Streamed calls: between two events of the stream. */
  idleMs: number;
  /** Calls without streaming: from the send to the whole answer. */
  totalMs: number;
}

/** The longest slot deadline (24 h): Node's timers fire at once past 2^31-1 ms, which would fail every call. */
export const MAX_CALL_DEADLINE_MS = 86_400_000;

export const DEFAULT_CALL_DEADLINES: CallDeadlines = { firstByteMs: 90_000, idleMs: 60_000, totalMs: 150_000 };

/** Which deadline of a call passed. */
export type DeadlinePhase = 'first-byte' | 'idle' | 'total';

/**
 * A model call's provider did not answer within the slot's deadline (no first byte, a stream gone
 * quiet, or no whole answer). Permanent for the job queue: the engine does not send the call again
 * (its turn fails with this code, and the session takes its next input); not `stream`, so no
 * non-streaming fallback follows either.
 */
export class ProviderDeadlineError extends ProviderError {
  constructor(
    readonly slot: string,
    readonly protocol: string,
    readonly phase: DeadlinePhase,
    readonly deadlineMs: number,
  ) {
    super(`${protocol} (slot ${slot}): ${describePhase(phase)} within ${deadlineMs} ms`, null, true);
  }
  override get code(): string {
    return 'PROVIDER_DEADLINE';
  }
}

function describePhase(phase: DeadlinePhase): string {
  if (phase === 'first-byte') return 'no first byte of the stream';
  if (phase === 'idle') return 'the stream sent nothing';
  return 'no answer';
}

/** Told of each deadline failure and each answered call of a slot (`/health`'s providers). */
export interface CallDeadlineListener {
  missed(failure: ProviderDeadlineError): void;
  answered(slot: string): void;
}

/**
 * A slot's adapter with deadlines: each call runs under its own timer, aborted through the SDK's
 * signal when a deadline passes (with the caller's signal: whichever comes first). A streamed call
 * waits `firstByteMs` for the first event of its stream, then at most `idleMs` between two events
 * (the adapters report each event with `onProgress`); a call without streaming waits `totalMs`.
 */
export class DeadlineAdapter implements ProviderAdapter {
  readonly protocol: ProviderAdapter['protocol'];

  constructor(
    private readonly inner: ProviderAdapter,
    private readonly options: { slot: string; deadlines: CallDeadlines; listener?: CallDeadlineListener },
  ) {
    this.protocol = inner.protocol;
  }

  buildRequest(...args: Parameters<ProviderAdapter['buildRequest']>): Record<string, unknown> {
    return this.inner.buildRequest(...args);
  }

  async send(body: Record<string, unknown>, options: SendOptions = {}): Promise<ModelResponse> {
    const { deadlines, slot, listener } = this.options;
    const streamed = body.stream === true;
    const deadline = new AbortController();
    let phase: DeadlinePhase = streamed ? 'first-byte' : 'total';
    let timer: NodeJS.Timeout | undefined;
    // when the stream's last event came: an event only moves this, the idle timer checks it when it fires
    // (no timer made and cleared per streamed chunk)
    let lastEventAt = 0;
    const arm = (next: DeadlinePhase, ms: number, waitMs = ms) => {
      clearTimeout(timer);
      phase = next;
      timer = setTimeout(() => {
        const quietMs = next === 'idle' ? performance.now() - lastEventAt : ms;
        if (quietMs < ms) arm(next, ms, ms - quietMs);
        else deadline.abort(new ProviderDeadlineError(slot, this.protocol, next, ms));
      }, waitMs);
    };
    arm(phase, streamed ? deadlines.firstByteMs : deadlines.totalMs);
    // the caller's signal and the deadline's, whichever aborts first (not `AbortSignal.any`: linkedSignal)
    const linked = options.signal ? linkedSignal([options.signal, deadline.signal]) : undefined;
    const signal = linked?.signal ?? deadline.signal;
    const onProgress = () => {
      lastEventAt = performance.now();
      if (phase !== 'idle' && !deadline.signal.aborted) arm('idle', deadlines.idleMs);
      options.onProgress?.();
    };
    try {
      const response = await this.inner.send(body, { ...options, signal, ...(streamed ? { onProgress } : {}) });
      listener?.answered(slot);
      return response;
    } catch (error) {
      // the caller's own abort (a cancel) stays what it is; only our deadline becomes a deadline failure
      if (deadline.signal.aborted && !options.signal?.aborted) {
        const failure =
          deadline.signal.reason instanceof ProviderDeadlineError ? deadline.signal.reason : new ProviderDeadlineError(slot, this.protocol, phase, 0);
        listener?.missed(failure);
        throw failure;
      }
      throw error;
    } finally {
      clearTimeout(timer);
      linked?.release();
    }
  }
}
