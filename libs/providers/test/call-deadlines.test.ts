import { endpointFor, parseLlmConfig, type Protocol, ProviderDeadlineError, ProviderRegistry } from '..';
import type { CallDeadlineListener, CallDeadlines, ModelCall } from '..';
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
 *
 * Nothing here depends on how fast the machine is: a deadline the test means to reach is reached
 * by a provider that the test holds (silent, or a stream held after its first events), and a
 * deadline it does not mean to reach is one no loaded machine comes near (`UNREACHED_MS`). Where a
 * loaded machine could still take longer than the short deadline, the attempt tells nothing and is
 * made again with the deadline doubled (a deadline that cut the call before the SDK sent its
 * request says nothing about sending it again).
 */
const PROTOCOLS: [Protocol, string][] = [
  ['openai-chat', 'gpt-4.1-mini'],
  ['openai-responses', 'gpt-4.1-mini'],
  ['anthropic', 'claude-sonnet-4-5'],
  ['gemini', 'gemini-2.5-flash'],
];
const DEADLINE_MS = 300;
const ENDED_WITHIN_MS = 15_000;
/** A deadline the test does not mean to reach (the first byte of a held stream, the gaps of one that answers). */
const UNREACHED_MS = 120_000;
/** Attempts of a never-answering call, its deadline doubled each time (300 ms ... 4.8 s). */
const SEND_ATTEMPTS = 5;

const every = (ms: number): CallDeadlines => ({ firstByteMs: ms, idleMs: ms, totalMs: ms });

const llm = (protocol: Protocol, model: string, deadlines: CallDeadlines) =>
  parseLlmConfig(
    ['story', 'fast']
      .map(
        (slot) =>
          `[slots.${slot}]\nprotocol = "${protocol}"\nmodel = "${model}"\ncontextWindow = 128000\nmaxOutputTokens = 256\n` +
          `firstByteTimeoutMs = ${deadlines.firstByteMs}\nidleTimeoutMs = ${deadlines.idleMs}\ntotalTimeoutMs = ${deadlines.totalMs}\n`,
      )
      .join('\n'),
  );

/** After one full turn of the event loop's poll phase: bytes a client wrote to a loopback socket have been read by its server. */
const afterPoll = async () => {
  for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve));
};

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

  const registryAt = (root: string, listener: CallDeadlineListener, deadlines: CallDeadlines) =>
    new ProviderRegistry(llm(protocol, model, deadlines), (p) => endpointFor(p, {}, root), listener);

  it.each([
    [true, 'first-byte'],
    [false, 'total'],
  ] as const)(
    'a provider that never answers (streamed: %s) fails the call with PROVIDER_DEADLINE %s, sent once',
    async (stream, phase) => {
      // requests the silent server received per attempt; an attempt whose deadline passed before the SDK sent the
      // request (0: the SDK still preparing it on a loaded machine) is made again with the deadline doubled
      const sent: number[] = [];
      for (let attempt = 0; attempt < SEND_ATTEMPTS && !sent.includes(1); attempt++) {
        const deadlineMs = DEADLINE_MS * 2 ** attempt;
        const listener = recorder();
        const { adapter } = registryAt(silent.url, listener, every(deadlineMs)).forSlot('story');
        const before = silent.requests;
        const started = performance.now();
        const error = await failureOf(adapter.send(adapter.buildRequest(call(model, stream))));
        const elapsed = performance.now() - started;

        expect(error).toBeInstanceOf(ProviderDeadlineError);
        const failure = error as ProviderDeadlineError;
        expect({ code: failure.code, phase: failure.phase, deadlineMs: failure.deadlineMs, slot: failure.slot, stream: failure.stream }).toEqual({
          code: 'PROVIDER_DEADLINE',
          phase,
          deadlineMs,
          slot: 'story',
          stream: undefined,
        });
        expect(elapsed).toBeGreaterThanOrEqual(deadlineMs - 5);
        expect(elapsed).toBeLessThan(ENDED_WITHIN_MS);
        // a resend would come from the SDK's own retry loop, before its promise rejects: what it wrote is read by
        // the silent server in the next poll phase; the pause leaves room for one sent later all the same
        await new Promise((r) => setTimeout(r, 200));
        await afterPoll();
        sent.push(silent.requests - before);
        expect(listener.missed).toHaveBeenCalledTimes(1);
        expect(listener.missed.mock.calls[0][0]).toBe(failure);
        expect(listener.answered).not.toHaveBeenCalled();
      }
      // the SDK sent it once: no retry after the abort (and never more than once in any attempt)
      expect(sent.every((n) => n <= 1)).toBe(true);
      expect(sent).toContain(1);
    },
    60_000,
  );

  it('a stream that goes quiet after its first events fails with PROVIDER_DEADLINE idle; one that answers is told as answered', async () => {
    const listener = recorder();
    // the first byte may come as late as a loaded machine makes it; only the quiet after the held events is timed
    const held = registryAt(gated.url, listener, { firstByteMs: UNREACHED_MS, idleMs: DEADLINE_MS, totalMs: UNREACHED_MS }).forSlot('story');
    const hold = gated.holdNext(2);
    const error = await failureOf(held.adapter.send(held.adapter.buildRequest(call(model, true))));
    await hold.reached;
    hold.release();
    expect(error).toBeInstanceOf(ProviderDeadlineError);
    expect({ phase: (error as ProviderDeadlineError).phase, deadlineMs: (error as ProviderDeadlineError).deadlineMs }).toEqual({
      phase: 'idle',
      deadlineMs: DEADLINE_MS,
    });
    expect(listener.missed).toHaveBeenCalledTimes(1);
    expect(listener.answered).not.toHaveBeenCalled();

    // the same slot, a stream that does not stop: no gap a loaded machine makes reaches its deadlines; each event
    // is reported as progress (the idle deadline's clock, whose re-arming call-deadlines-idle.test.ts shows)
    const { adapter } = registryAt(gated.url, listener, every(UNREACHED_MS)).forSlot('story');
    let texts = 0;
    let progress = 0;
    const answered = await adapter.send(adapter.buildRequest(call(model, true)), { onText: () => texts++, onProgress: () => progress++ });
    expect(answered.text.length).toBeGreaterThan(0);
    expect(texts).toBeGreaterThan(1);
    expect(progress).toBeGreaterThanOrEqual(texts);
    expect(listener.answered).toHaveBeenCalledWith('story');
    expect(listener.missed).toHaveBeenCalledTimes(1);
  });
});
