import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HealthReport } from '../../apps/api/health.controller';
import { ProviderEmulator } from '../../libs/emulator';
import { type SilentServer, startSilentServer } from '../support/silent-server';
import { type Stack, startStack } from '../support/stack';

/**
 * The same as test/unit/provider-deadlines-embedded.test.ts with the API and a worker as separate
 * processes (PostgreSQL + BullMQ): the worker's call to a provider that never answers fails
 * `PROVIDER_DEADLINE` once, its turn ends `failed` without a job retry, the API's `/health` shows
 * the slot slow (the worker wrote it to Redis), and the session's next input commits once the
 * provider answers again, which clears the slot. Deadlines are short settings (1.5 s to the first byte,
 * 3 s a call, 6 s a turn: they bound the next input's call too, which a loaded machine's worker once
 * saw answered later than 300 ms); the bounds asserted are generous.
 */
const ENDED_WITHIN_MS = 30_000;

describe('a provider that never answers (PostgreSQL + BullMQ, separate processes)', () => {
  let emulator: ProviderEmulator;
  let silent: SilentServer;
  let stack: Stack;
  let dir: string;

  beforeAll(async () => {
    emulator = await new ProviderEmulator().start();
    silent = await startSilentServer();
    dir = mkdtempSync(join(tmpdir(), 'covel-deadlines-'));
    const file = join(dir, 'llm.toml');
    writeFileSync(
      file,
      ['story', 'fast']
        .map(
          (slot) =>
            `[slots.${slot}]\nprotocol = "openai-chat"\nmodel = "gpt-4.1-mini"\ncontextWindow = 128000\nmaxOutputTokens = 512\n` +
            `firstByteTimeoutMs = 1500\nidleTimeoutMs = 1500\ntotalTimeoutMs = 3000\n`,
        )
        .join('\n'),
    );
    stack = await startStack({ workers: 1, env: { COVEL_EMULATOR_URL: silent.url, COVEL_LLM_CONFIG: file, COVEL_TURN_DEADLINE_MS: '6000' } });
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await silent?.close();
    await emulator?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const health = async () => {
    const res = await fetch(`${stack.baseUrl}/health`);
    return { status: res.status, body: (await res.json()) as HealthReport };
  };

  it('the turn fails PROVIDER_DEADLINE once, the API’s /health shows the slot slow, the next input commits and clears it', async () => {
    const player = stack.client;
    expect((await health()).body.providers?.map((p) => p.state)).toEqual(['ok', 'ok']);
    const sessionId = (await player.createSession({ worldId: 'emberback', plugins: ['narrator'] })).id;
    const requestsBefore = silent.requests;
    const submittedAt = performance.now();
    const { executionId } = await player.submit(sessionId, 'Ring the bell');
    let view: { status: string; attempts: number; error: { code: string; message: string } | null };
    do {
      view = await player.request('GET', `/v1/executions/${executionId}?waitMs=5000`);
    } while ((view.status === 'queued' || view.status === 'running') && performance.now() - submittedAt < 60_000);
    expect({ status: view.status, code: view.error?.code, attempts: view.attempts }).toEqual({ status: 'failed', code: 'PROVIDER_DEADLINE', attempts: 1 });
    expect(performance.now() - submittedAt).toBeLessThan(ENDED_WITHIN_MS);
    expect(silent.requests - requestsBefore).toBe(1);

    const slow = await health();
    expect(slow.status).toBe(503);
    expect(slow.body.status).toBe('degraded');
    expect(slow.body.providers?.[0]).toEqual({
      slot: 'story',
      state: 'slow',
      lastDeadlineMiss: { at: expect.any(String), protocol: 'openai-chat', phase: 'first-byte', deadlineMs: 1_500, code: 'PROVIDER_DEADLINE' },
    });

    silent.forwardTo(Number(new URL(emulator.url).port));
    const next = await player.submit(sessionId, 'Look around');
    expect(await player.waitFor(next.executionId, ENDED_WITHIN_MS)).toBe('committed');
    // the worker marks the slot answered without waiting for it (best effort): look a few times
    let after = await health();
    for (let i = 0; i < 50 && after.body.status !== 'ok'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      after = await health();
    }
    expect(after.body.providers?.[0]).toMatchObject({ slot: 'story', state: 'ok', lastDeadlineMiss: { phase: 'first-byte' } });
    expect(after.status).toBe(200);
  }, 120_000);
});
