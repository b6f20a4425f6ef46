import { ProviderError, type SendOptions, type StreamFailure } from './types';

/**
 * What a streamed call saw before it ended, kept by the adapter's `send`: whether the stream opened
 * (the provider answered 200 and started the event stream) and whether any text delta arrived.
 */
export class StreamWatch {
  opened = false;
  textSeen = false;
  constructor(private readonly signal?: AbortSignal) {}

  /** The send options with their text deltas watched. */
  watch(options: SendOptions): SendOptions {
    return {
      ...options,
      onText: (delta) => {
        this.textSeen = true;
        options.onText?.(delta);
      },
    };
  }

  /**
   * Why the same request without streaming may succeed where this streamed one failed (undefined:
   * it would not, or the caller aborted): `refused`, the provider refused streaming (a 400 / 422
   * naming it); `broken`, the stream opened and ended in an error without an HTTP status before
   * any text delta arrived. A stream that delivered text shows that streaming works: its failure is
   * an ordinary one (retryable as any other).
   */
  failure(status: number | null, message: string): StreamFailure | undefined {
    if (this.signal?.aborted) return undefined;
    if ((status === 400 || status === 422) && /\bstream/i.test(message)) return 'refused';
    if (status === null && this.opened && !this.textSeen) return 'broken';
    return undefined;
  }
}

/** Maps an SDK error (after the SDK's own retries) to one typed error; `watch`: the call was streamed. */
export function toProviderError(protocol: string, error: unknown, watch?: StreamWatch): ProviderError {
  const base = error instanceof ProviderError ? error : fromSdkError(protocol, error);
  const stream = watch?.failure(base.status, base.message);
  return stream && base.stream === undefined ? new ProviderError(base.message, base.status, base.retryable, stream) : base;
}

function fromSdkError(protocol: string, error: unknown): ProviderError {
  const status = typeof (error as { status?: unknown })?.status === 'number' ? ((error as { status: number }).status as number) : null;
  const retryable = status === null || status === 408 || status === 409 || status === 429 || status >= 500;
  return new ProviderError(`${protocol}: ${error instanceof Error ? error.message : String(error)}`, status, retryable);
}
