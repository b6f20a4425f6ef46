import { DeadlineAdapter, type ModelResponse, type ProviderAdapter, ProviderDeadlineError, type SendOptions } from '..';

/**
 * The idle deadline counts from a stream's latest event, however long the stream has run: a stream
 * whose events keep coming is never cut, one that goes quiet fails `idle` (the adapter's timer reads
 * when the last event came; it is not made again for every event). A stream adapter without a network:
 * `events` events `everyMs` apart, then `quietMs` of nothing before it answers.
 */
const IDLE_MS = 120;

function streamingAdapter(stream: { events: number; everyMs: number; quietMs: number }): ProviderAdapter {
  const sleep = (ms: number, signal?: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, ms);
      signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
    });
  return {
    protocol: 'openai-chat',
    buildRequest: () => ({ stream: true }),
    async send(_body, options: SendOptions = {}): Promise<ModelResponse> {
      for (let i = 0; i < stream.events; i++) {
        await sleep(stream.everyMs, options.signal);
        options.onProgress?.();
        options.onText?.('x');
      }
      await sleep(stream.quietMs, options.signal);
      return { text: 'x'.repeat(stream.events), toolCalls: [], finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 } };
    },
  };
}

const withDeadlines = (inner: ProviderAdapter) =>
  new DeadlineAdapter(inner, { slot: 'story', deadlines: { firstByteMs: IDLE_MS, idleMs: IDLE_MS, totalMs: IDLE_MS } });

describe('the idle deadline of a streamed call', () => {
  it('is not reached while events keep coming, however long the stream runs in all (here about 5 idle deadlines)', async () => {
    const adapter = withDeadlines(streamingAdapter({ events: 20, everyMs: IDLE_MS / 4, quietMs: 0 }));
    const response = await adapter.send({ stream: true });
    expect(response.text).toBe('x'.repeat(20));
  });

  it('is reached once the stream goes quiet after its events: PROVIDER_DEADLINE idle', async () => {
    const adapter = withDeadlines(streamingAdapter({ events: 6, everyMs: IDLE_MS / 4, quietMs: IDLE_MS * 4 }));
    const error = await adapter.send({ stream: true }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ProviderDeadlineError);
    expect({ phase: (error as ProviderDeadlineError).phase, deadlineMs: (error as ProviderDeadlineError).deadlineMs }).toEqual({
      phase: 'idle',
      deadlineMs: IDLE_MS,
    });
  });
});
