import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type PlayClient } from '../../apps/play/play-client';
import type { HealthReport } from '../../apps/api/health.controller';
import { ProviderEmulator } from '../../libs/emulator';
import type { StoredEvent } from '../../libs/events';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';
import { type SilentServer, startSilentServer } from '../support/silent-server';

/**
 * A provider that accepts the connection and never answers (a loopback TCP server that reads the
 * request and sends nothing), behind the story slot, through the official SDK over HTTP, on the
 * embedded default: the turn ends `failed` with a clear code within its deadline (not held for
 * minutes by the SDK's timeout, its retries, a non-streaming fallback and the job's five attempts),
 * `/health` says the slot is slow, and the session takes its next input, which commits once the
 * provider answers again. The deadlines are short settings (1.5 s, 3 s: the first byte's also applies to the
 * next input's call, which a loaded machine's emulator answered later than 300 ms once); the bounds asserted are
 * generous ("it ended at all"), not a speed check.
 */
const ENDED_WITHIN_MS = 20_000;

function llmToml(firstByteTimeoutMs: number): string {
  return ['story', 'fast']
    .map(
      (slot) =>
        `[slots.${slot}]\nprotocol = "openai-chat"\nmodel = "gpt-4.1-mini"\ncontextWindow = 128000\nmaxOutputTokens = 512\n` +
        `firstByteTimeoutMs = ${firstByteTimeoutMs}\nidleTimeoutMs = ${firstByteTimeoutMs}\ntotalTimeoutMs = ${firstByteTimeoutMs}\n`,
    )
    .join('\n');
}

interface ExecutionAnswer {
  status: string;
  error: { code: string; message: string } | null;
}

describe('a provider that never answers (embedded default)', () => {
  let emulator: ProviderEmulator;
  let silent: SilentServer;
  const dirs: string[] = [];
  const engines: EmbeddedEngine[] = [];

  beforeAll(async () => {
    emulator = await new ProviderEmulator().start();
    silent = await startSilentServer();
  });
  afterAll(async () => {
    for (const e of engines) await e.stop();
    await silent?.close();
    await emulator?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  afterEach(() => silent.forwardTo(null));

  async function start(settings: { firstByteTimeoutMs: number; turnDeadlineMs: number }) {
    const dir = mkdtempSync(join(tmpdir(), 'covel-deadlines-'));
    dirs.push(dir);
    const file = join(dir, 'llm.toml');
    writeFileSync(file, llmToml(settings.firstByteTimeoutMs));
    const covel = await startEmbedded({ COVEL_EMULATOR_URL: silent.url, COVEL_LLM_CONFIG: file, COVEL_TURN_DEADLINE_MS: String(settings.turnDeadlineMs) });
    engines.push(covel);
    const player = await covel.newTenant('deadlines');
    const sessionId = (await player.createSession({ worldId: 'emberback', plugins: ['narrator'] })).id;
    return { covel, player, sessionId };
  }

  /** The execution once it has ended, and how long after its submission that was. */
  async function ended(player: PlayClient, executionId: string, submittedAt: number): Promise<ExecutionAnswer & { afterMs: number }> {
    for (;;) {
      const answer = await player.request<ExecutionAnswer>('GET', `/v1/executions/${executionId}?waitMs=5000`);
      if (answer.status !== 'queued' && answer.status !== 'running') return { ...answer, afterMs: performance.now() - submittedAt };
      if (performance.now() - submittedAt > 60_000) throw new Error(`still ${answer.status} after 60 s`);
    }
  }

  async function health(covel: EmbeddedEngine): Promise<{ status: number; body: HealthReport }> {
    const res = await fetch(`${covel.baseUrl}/health`);
    return { status: res.status, body: (await res.json()) as HealthReport };
  }

  const ofExecution = (events: StoredEvent[], executionId: string, type: string) =>
    events.filter((e) => e.type === type && (e.data as { executionId?: string }).executionId === executionId);

  it('a first byte that never comes: the turn fails PROVIDER_DEADLINE (sent once, no fallback, no retry), /health says slow, the next input commits', async () => {
    const { covel, player, sessionId } = await start({ firstByteTimeoutMs: 1_500, turnDeadlineMs: 3_000 });
    expect((await health(covel)).body.providers).toEqual([
      { slot: 'story', state: 'ok', lastDeadlineMiss: null },
      { slot: 'fast', state: 'ok', lastDeadlineMiss: null },
    ]);
    const requestsBefore = silent.requests;
    const submittedAt = performance.now();
    const { executionId } = await player.submit(sessionId, 'Ring the bell');
    const end = await ended(player, executionId, submittedAt);
    expect({ status: end.status, code: end.error?.code }).toEqual({ status: 'failed', code: 'PROVIDER_DEADLINE' });
    expect(end.error?.message).toMatch(/slot story.*no first byte.*1500 ms/);
    expect(end.afterMs).toBeLessThan(ENDED_WITHIN_MS);

    // one call, sent once: no SDK retry, no non-streaming fallback, one attempt of the execution
    const events = await covel.engine.store.readStream(sessionId);
    expect(ofExecution(events, executionId, 'llm.calling@1')).toHaveLength(1);
    expect(ofExecution(events, executionId, 'execution.started@1')).toHaveLength(1);
    // at most once (never retried): on a loaded machine the first-byte deadline can end the call before the
    // silent server, on this process's own loop, has read the request line, so 0 is possible too
    expect(silent.requests - requestsBefore).toBeLessThanOrEqual(1);

    const slow = await health(covel);
    expect(slow.status).toBe(503);
    expect(slow.body.status).toBe('degraded');
    expect(slow.body.providers?.find((p) => p.slot === 'story')).toEqual({
      slot: 'story',
      state: 'slow',
      lastDeadlineMiss: { at: expect.any(String), protocol: 'openai-chat', phase: 'first-byte', deadlineMs: 1_500, code: 'PROVIDER_DEADLINE' },
    });

    // the provider answers again: the session's next input commits, and the slot is no longer slow
    silent.forwardTo(Number(new URL(emulator.url).port));
    const next = await player.submit(sessionId, 'Look around');
    expect(await player.waitFor(next.executionId, ENDED_WITHIN_MS)).toBe('committed');
    const after = await health(covel);
    expect(after.body.providers?.find((p) => p.slot === 'story')?.state).toBe('ok');
    expect(after.body.status).toBe('ok');
  }, 90_000);

  it('a turn that outlives its deadline (the call deadline longer): it fails TURN_DEADLINE within it, not retried, and the next input commits', async () => {
    const { covel, player, sessionId } = await start({ firstByteTimeoutMs: 60_000, turnDeadlineMs: 1_500 });
    const submittedAt = performance.now();
    const { executionId } = await player.submit(sessionId, 'Wake the dragon');
    const end = await ended(player, executionId, submittedAt);
    expect({ status: end.status, code: end.error?.code }).toEqual({ status: 'failed', code: 'TURN_DEADLINE' });
    expect(end.error?.message).toMatch(/within 1500 ms/);
    expect(end.afterMs).toBeLessThan(ENDED_WITHIN_MS);
    const events = await covel.engine.store.readStream(sessionId);
    expect(ofExecution(events, executionId, 'execution.started@1')).toHaveLength(1);
    expect(ofExecution(events, executionId, 'llm.calling@1')).toHaveLength(1);

    silent.forwardTo(Number(new URL(emulator.url).port));
    const next = await player.submit(sessionId, 'Look around');
    expect(await player.waitFor(next.executionId, ENDED_WITHIN_MS)).toBe('committed');
  }, 90_000);
});
