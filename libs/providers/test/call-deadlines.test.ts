import { endpointFor, parseLlmConfig, type Protocol, ProviderDeadlineError, ProviderRegistry } from '..';
import type { CallDeadlineListener, ModelCall } from '..';
import { ProviderEmulator } from '../../emulator';
import { startGatedProvider, type GatedProvider } from '../../../test/support/gated-provider';
import { type SilentServer, startSilentServer } from '../../../test/support/silent-server';

/**
 * Every call of a slot runs under the slot's deadlines, on each of the four protocols through its
 * official SDK over real HTTP: a provider that accepts the connection and never answers fails the
 * call with `PROVIDER_DEADLINE` (phase `first-byte` streamed, `total` without streaming) once the
 * deadline passes, and the SDK does not send it again; a stream that goes quiet after its first
 * events fails with phase `idle`. The bounds below are generous (the deadlines are 300 ms): they
 * say that the call ended at all, where without deadlines the SDK waits 120 s and retries.
 */
const PROTOCOLS: [Protocol, string][] = [
  ['openai-chat', 'gpt-4.1-mini'],
  ['openai-responses', 'gpt-4.1-mini'],
  ['anthropic', 'claude-sonnet-4-5'],
  ['gemini', 'gemini-2.5-flash'],
];
const DEADLINE_MS = 300;
const ENDED_WITHIN_MS = 15_000;

const llm = (protocol: Protocol, model: string) =>
  parseLlmConfig(
    ['story', 'fast']
      .map(
        (slot) =>
          `[slots.${slot}]\nprotocol = "${protocol}"\nmodel = "${model}"\ncontextWindow = 128000\nmaxOutputTokens = 256\n` +
          `firstByteTimeoutMs = ${DEADLINE_MS}\nidleTimeoutMs = ${DEADLINE_MS}\ntotalTimeoutMs = ${DEADLINE_MS}\n`,
      )
      .join('\n'),
  );

const call = (model: string, stream: boolean): ModelCall => ({
  model,
  messages: [
    { role: 'system', content: 'You are the narrator.' },
    { role: 'user', content: 'The caravan reaches the salt flats at dusk.' },
  ],
  stream,
});

function recorder(): CallDeadlineListener & { missed: jest.Mock; answered: jest.Mock } {
  return { missed: jest.fn(), answered: jest.fn() };
}

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => new Error('the call answered'),
    (error: unknown) => error,
  );
}

describe.each(PROTOCOLS)('call deadlines: %s', (protocol, model) => {
  let silent: SilentServer;
  let emulator: ProviderEmulator;
  let gated: GatedProvider;

  beforeAll(async () => {
    silent = await startSilentServer();
    emulator = await new ProviderEmulator({ chunkDelayMs: 20 }).start();
    gated = await startGatedProvider(emulator.url);
  });
  afterAll(async () => {
    await gated?.close();
    await emulator?.stop();
    await silent?.close();
  });

  const registryAt = (root: string, listener: CallDeadlineListener) => new ProviderRegistry(llm(protocol, model), (p) => endpointFor(p, {}, root), listener);

  it.each([
    [true, 'first-byte'],
    [false, 'total'],
  ] as const)('a provider that never answers (streamed: %s) fails the call with PROVIDER_DEADLINE %s, sent once', async (stream, phase) => {
    const listener = recorder();
    const { adapter } = registryAt(silent.url, listener).forSlot('story');
    const before = silent.requests;
    const started = performance.now();
    const error = await failureOf(adapter.send(adapter.buildRequest(call(model, stream))));
    const elapsed = performance.now() - started;

    expect(error).toBeInstanceOf(ProviderDeadlineError);
    const failure = error as ProviderDeadlineError;
    expect({ code: failure.code, phase: failure.phase, deadlineMs: failure.deadlineMs, slot: failure.slot, stream: failure.stream }).toEqual({
      code: 'PROVIDER_DEADLINE',
      phase,
      deadlineMs: DEADLINE_MS,
      slot: 'story',
      stream: undefined,
    });
    expect(elapsed).toBeGreaterThanOrEqual(DEADLINE_MS - 5);
    expect(elapsed).toBeLessThan(ENDED_WITHIN_MS);
    // the SDK sent it once: no retry after the abort
    await new Promise((r) => setTimeout(r, 200));
    expect(silent.requests - before).toBe(1);
    expect(listener.missed).toHaveBeenCalledTimes(1);
    expect(listener.missed.mock.calls[0][0]).toBe(failure);
    expect(listener.answered).not.toHaveBeenCalled();
  });

  it('a stream that goes quiet after its first events fails with PROVIDER_DEADLINE idle; one that answers is told as answered', async () => {
    const listener = recorder();
    const { adapter } = registryAt(gated.url, listener).forSlot('story');
    const hold = gated.holdNext(2);
    const error = await failureOf(adapter.send(adapter.buildRequest(call(model, true))));
    hold.release();
    expect(error).toBeInstanceOf(ProviderDeadlineError);
    expect((error as ProviderDeadlineError).phase).toBe('idle');
    expect(listener.missed).toHaveBeenCalledTimes(1);

    // the same slot, a stream that does not stop (20 ms between chunks, under the 300 ms idle deadline)
    const answered = await adapter.send(adapter.buildRequest(call(model, true)));
    expect(answered.text.length).toBeGreaterThan(0);
    expect(listener.answered).toHaveBeenCalledWith('story');
  });
});
