import { getEventListeners } from 'node:events';
import { DeadlineAdapter, linkedSignal, type ModelResponse, type ProviderAdapter, type SendOptions } from '..';

const listeners = (s: AbortSignal) => getEventListeners(s, 'abort').length;

describe('linkedSignal: AbortSignal.any through listeners it takes off again', () => {
  it('aborts with the reason of the first source that aborts, and leaves the others', () => {
    const [a, b] = [new AbortController(), new AbortController()];
    const linked = linkedSignal([a.signal, b.signal]);
    expect(linked.signal.aborted).toBe(false);
    b.abort('b first');
    a.abort('a later');
    expect({ aborted: linked.signal.aborted, reason: linked.signal.reason as unknown }).toEqual({ aborted: true, reason: 'b first' });
    // the first abort took its links off both sources
    expect([listeners(a.signal), listeners(b.signal)]).toEqual([0, 0]);
  });

  it('is aborted from the start when a source already is, with its reason (as AbortSignal.any)', () => {
    const reason = new Error('cancelled');
    const linked = linkedSignal([new AbortController().signal, AbortSignal.abort(reason)]);
    expect({ aborted: linked.signal.aborted, reason: linked.signal.reason as unknown }).toEqual({ aborted: true, reason });
  });

  it('once released, a source that aborts no longer aborts it, and holds no listener of it', () => {
    const source = new AbortController();
    const linked = linkedSignal([source.signal, new AbortController().signal]);
    expect(listeners(source.signal)).toBe(1);
    linked.release();
    linked.release();
    expect(listeners(source.signal)).toBe(0);
    source.abort();
    expect(linked.signal.aborted).toBe(false);
  });
});

describe('DeadlineAdapter: the caller signal of a call', () => {
  const answer: ModelResponse = { text: 'x', toolCalls: [], finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 } };
  const inner: ProviderAdapter = {
    protocol: 'openai-chat',
    buildRequest: () => ({}),
    send: () => Promise.resolve(answer),
  };
  const adapter = new DeadlineAdapter(inner, { slot: 'story', deadlines: { firstByteMs: 60_000, idleMs: 60_000, totalMs: 60_000 } });

  it('keeps no listener on it after the call (a job signal lives across many calls)', async () => {
    const job = new AbortController();
    for (let i = 0; i < 3; i++) await adapter.send({}, { signal: job.signal });
    expect(listeners(job.signal)).toBe(0);
  });

  it('aborts the call the provider is sent, with its reason', async () => {
    const pending = new AbortController();
    let during: AbortSignal | undefined;
    const held: ProviderAdapter = {
      ...inner,
      send: (_body, options: SendOptions = {}) =>
        new Promise((_, reject) => {
          during = options.signal;
          options.signal?.addEventListener('abort', () => reject(options.signal?.reason), { once: true });
        }),
    };
    const sent = new DeadlineAdapter(held, { slot: 'story', deadlines: { firstByteMs: 60_000, idleMs: 60_000, totalMs: 60_000 } }).send(
      {},
      { signal: pending.signal },
    );
    pending.abort('cancelled');
    await expect(sent).rejects.toBe('cancelled');
    expect({ aborted: during?.aborted, listeners: listeners(pending.signal) }).toEqual({ aborted: true, listeners: 0 });
  });
});
