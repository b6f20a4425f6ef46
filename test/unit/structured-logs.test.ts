import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication, INestApplicationContext } from '@nestjs/common';
import { createApiApp } from '../../apps/api/create-api-app';
import { PlayClient } from '../../apps/play/play-client';
import { createWorkerApp } from '../../apps/worker/create-worker-app';
import { ConfigError, createEngine, createLogger, type Engine, loadConfig, structured, withLogScope } from '../../libs/engine';
import { ProviderEmulator } from '../../libs/emulator';

/**
 * The engine's log lines, read from an in-memory destination of its real logger (pino), while the
 * real engine runs turns: the embedded default (PGlite, in-process queue) whose OpenAI slots are
 * configured with a provider key and pointed at a provider emulator this test starts (so the key is
 * really sent, and a fault can echo what the request held).
 */
const PROVIDER_KEY = 'sk-live-Qm9vYmFyQmF6cXV4LOGTEST7f3a';
const PLAYER_WORDS = 'Zanzibar-periwinkle-7781';

interface Running {
  engine: Engine;
  client: PlayClient;
  apiKey: string;
  tenantId: string;
  lines: string[];
  stop(): Promise<void>;
}

async function start(emulator: ProviderEmulator, env: Record<string, string> = {}): Promise<Running> {
  const dir = mkdtempSync(join(tmpdir(), 'covel-logs-'));
  const { DATABASE_URL, REDIS_URL, OPENAI_API_KEY, COVEL_EMULATOR_URL, COVEL_LOG_FORMAT, COVEL_LOG_LEVEL, COVEL_LOG_PLAYER_TEXT, ...inherited } = process.env;
  const config = loadConfig({
    ...inherited,
    COVEL_DATA_DIR: dir,
    PORT: '0',
    OPENAI_API_KEY: PROVIDER_KEY,
    OPENAI_BASE_URL: `${emulator.url}/v1`,
    COVEL_LOG_FORMAT: 'json',
    COVEL_LOG_LEVEL: 'debug',
    ...env,
  });
  const lines: string[] = [];
  const engine = await createEngine(config, 'all', createLogger({ ...config.log, destination: { write: (line) => void lines.push(line) } }));
  let worker: INestApplicationContext | null = null;
  let api: INestApplication | null = null;
  try {
    worker = await createWorkerApp(engine);
    await worker.init();
    api = await createApiApp(engine);
    await api.listen(0, '127.0.0.1');
  } catch (error) {
    await engine.close();
    throw error;
  }
  const { tenant, apiKey } = await engine.tenants.create('logs');
  const client = new PlayClient((await api.getUrl()).replace('[::1]', '127.0.0.1'), apiKey);
  return {
    engine,
    client,
    apiKey,
    tenantId: tenant.id,
    lines,
    async stop() {
      await api?.close();
      await worker?.close();
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A turn the provider fails with a 400 whose message echoes the player's words and the key (as some providers' errors do). */
async function failTurn(running: Running, emulator: ProviderEmulator) {
  const { id: sessionId } = await running.client.createSession();
  emulator.injectFault({ status: 400, times: 1, message: `cannot process "${PLAYER_WORDS}" for key ${PROVIDER_KEY}` });
  const { executionId } = await running.client.submit(sessionId, `I whisper ${PLAYER_WORDS} to the gate`);
  await expect(running.client.waitFor(executionId, 60_000)).rejects.toThrow(/turn failed/);
  return { sessionId, executionId };
}

const parsed = (lines: string[]) => lines.map((line) => JSON.parse(line) as Record<string, unknown>);

describe('structured logs of the running engine', () => {
  let emulator: ProviderEmulator;
  beforeAll(async () => {
    emulator = await new ProviderEmulator().start();
  });
  afterAll(async () => {
    await emulator.stop();
  });

  describe('default settings (player text off)', () => {
    let running: Running;
    beforeAll(async () => {
      running = await start(emulator);
    }, 60_000);
    afterAll(async () => {
      await running.stop();
    }, 60_000);

    it('a failed turn logs one JSON error line with tenant, session, execution, attempt, runtime and call ids and the error code', async () => {
      const { sessionId, executionId } = await failTurn(running, emulator);
      const entries = parsed(running.lines);
      const failed = entries.filter((e) => e.msg === `execution ${executionId} failed`);
      expect(failed).toHaveLength(1);
      expect(failed[0]).toMatchObject({
        level: 'error',
        tenantId: running.tenantId,
        sessionId,
        executionId,
        attempt: 1,
        runtime: expect.stringMatching(/^[^/]+\/[^/]+$/),
        callId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        errorCode: 'PROVIDER_400',
        errorCategory: expect.any(String),
        err: expect.objectContaining({ code: 'PROVIDER_400' }),
      });
      // the call named is the one the log recorded for that execution
      const events = await running.engine.store.readStream(sessionId);
      const calls = events.filter((e) => e.type === 'llm.calling@1').map((e) => (e.data as { callId: string }).callId);
      expect(calls).toContain(failed[0].callId);
    }, 90_000);

    it('every line a turn job logs carries its ids: the runtime step that made the call names it', async () => {
      const { id: sessionId } = await running.client.createSession();
      const { executionId } = await running.client.submit(sessionId, 'Look around');
      await running.client.waitFor(executionId, 60_000);
      const ofTurn = parsed(running.lines).filter((e) => e.executionId === executionId);
      expect(ofTurn.length).toBeGreaterThanOrEqual(2);
      for (const entry of ofTurn)
        expect(entry).toMatchObject({ tenantId: running.tenantId, sessionId, executionId, job: expect.stringMatching(/^(turn|runtime)$/) });
      const produced = ofTurn.filter((e) => e.msg === 'runtime step: produced');
      expect(produced.length).toBeGreaterThanOrEqual(1);
      for (const entry of produced) expect(entry).toMatchObject({ attempt: 1, runtime: expect.any(String), callId: expect.any(String) });
    }, 90_000);

    it('a failed job attempt the queue retries is logged with the job ids (no message: it may quote the model)', async () => {
      const { id: sessionId } = await running.client.createSession();
      // the SDK itself sends 4 times (maxRetries 3): the 4th 500 fails the job's first attempt, its retry succeeds
      emulator.injectFault({ status: 500, times: 4, message: `overloaded while reading "${PLAYER_WORDS}"` });
      const { executionId } = await running.client.submit(sessionId, 'Wait for it');
      await running.client.waitFor(executionId, 60_000);
      // a runtime job's failed attempt, or (a stage of one runtime runs inline) the line naming the runtime its turn job's retry runs again
      const retried = parsed(running.lines).find(
        (e) => e.executionId === executionId && ['runtime job failed, will retry', 'inline runtime failed, its turn job will retry'].includes(String(e.msg)),
      );
      expect(retried).toMatchObject({
        level: 'warn',
        tenantId: running.tenantId,
        sessionId,
        attempt: 1,
        runtime: expect.any(String),
        err: { code: 'PROVIDER_500' },
      });
      expect(JSON.stringify(retried)).not.toContain(PLAYER_WORDS);
    }, 90_000);

    it('no line holds the provider key, the tenant key or the player text (nor the error message echoing them)', async () => {
      await running.client.playTurn((await running.client.createSession()).id, `Hello, ${PLAYER_WORDS}`);
      await failTurn(running, emulator);
      const all = running.lines.join('');
      expect(running.lines.length).toBeGreaterThan(3);
      expect(all).not.toContain(PROVIDER_KEY);
      expect(all).not.toContain(running.apiKey);
      expect(all).not.toContain(PLAYER_WORDS);
    }, 120_000);

    it('secret and text fields are redacted wherever code logs them, and turn ids come from the log scope', () => {
      running.engine.logger.log('probe', { headers: { authorization: `Bearer ${running.apiKey}` }, apiKey: PROVIDER_KEY, text: PLAYER_WORDS });
      withLogScope({ tenantId: 't1', sessionId: 's1' }, () => running.engine.logger.child({ component: 'probe' }).warn('scoped'));
      const [probe, scoped] = parsed(running.lines.slice(-2));
      expect(probe).toMatchObject({ msg: 'probe', headers: { authorization: '[redacted]' }, apiKey: '[redacted]', text: '[redacted]' });
      expect(scoped).toMatchObject({ msg: 'scoped', level: 'warn', tenantId: 't1', sessionId: 's1', component: 'probe' });
    });
  });

  describe('COVEL_LOG_PLAYER_TEXT=1', () => {
    let running: Running;
    beforeAll(async () => {
      running = await start(emulator, { COVEL_LOG_PLAYER_TEXT: '1' });
    }, 60_000);
    afterAll(async () => {
      await running.stop();
    }, 60_000);

    it('logs text (the failed turn carries the error message quoting the player), never the key', async () => {
      const { executionId } = await failTurn(running, emulator);
      const failed = parsed(running.lines).find((e) => e.msg === `execution ${executionId} failed`);
      expect(JSON.stringify(failed)).toContain(PLAYER_WORDS);
      running.engine.logger.log('probe', { text: PLAYER_WORDS });
      expect(parsed(running.lines.slice(-1))[0]).toMatchObject({ text: PLAYER_WORDS });
      expect(running.lines.join('')).not.toContain(PROVIDER_KEY);
    }, 90_000);
  });
});

describe('log settings', () => {
  const base = { COVEL_DATA_DIR: tmpdir() };

  it('json on PostgreSQL deployments, pretty on the embedded default, either one when asked', () => {
    expect(loadConfig(base).log).toMatchObject({ format: 'pretty', level: 'info', playerText: false });
    expect(loadConfig({ ...base, DATABASE_URL: 'postgres://u:pw-1234@db/covel' }).log).toMatchObject({ format: 'json' });
    expect(loadConfig({ ...base, COVEL_LOG_FORMAT: 'json' }).log.format).toBe('json');
    expect(loadConfig({ ...base, DATABASE_URL: 'postgres://db/covel', COVEL_LOG_FORMAT: 'pretty', COVEL_LOG_LEVEL: 'warn' }).log).toMatchObject({
      format: 'pretty',
      level: 'warn',
    });
    expect(loadConfig({ ...base, COVEL_LOG_PLAYER_TEXT: 'true' }).log.playerText).toBe(true);
  });

  it.each([
    ['COVEL_LOG_FORMAT', 'yaml'],
    ['COVEL_LOG_LEVEL', 'loud'],
    ['COVEL_LOG_PLAYER_TEXT', 'yes'],
  ])('a bad %s (%j) stops start-up with a ConfigError naming it', (name, value) => {
    const load = () => loadConfig({ ...base, [name]: value });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(new RegExp(`${name}: `));
  });

  it('the secrets to scrub are the environment keys and URL passwords', () => {
    const { secrets } = loadConfig({ ...base, OPENAI_API_KEY: PROVIDER_KEY, DATABASE_URL: 'postgres://u:pw-1234@db/covel' }).log;
    expect(secrets).toEqual(expect.arrayContaining([PROVIDER_KEY, 'pw-1234']));
  });

  it('pretty writes readable lines, json writes JSON; the level filters; secrets are scrubbed by value in both', () => {
    for (const format of ['pretty', 'json'] as const) {
      const lines: string[] = [];
      const logger = createLogger({ format, level: 'info', playerText: false, secrets: [PROVIDER_KEY], destination: { write: (l) => void lines.push(l) } });
      withLogScope({ executionId: 'e-1', attempt: 2 }, () => logger.warn(`provider said: bad key ${PROVIDER_KEY}`, { errorCode: 'PROVIDER_401' }));
      logger.debug('hidden at info');
      expect(lines).toHaveLength(1);
      expect(lines[0]).not.toContain(PROVIDER_KEY);
      if (format === 'json') {
        expect(JSON.parse(lines[0])).toMatchObject({
          level: 'warn',
          msg: 'provider said: bad key [redacted]',
          executionId: 'e-1',
          attempt: 2,
          errorCode: 'PROVIDER_401',
        });
      } else {
        expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN {2}provider said: bad key \[redacted\] {2}executionId=e-1 attempt=2 errorCode=PROVIDER_401\n$/);
        expect(() => JSON.parse(lines[0])).toThrow();
      }
    }
  });

  it('a plain string-only logger stays a Logger: structured() gives it a silent debug and children that pass their bindings as fields', () => {
    const seen: [string, unknown][] = [];
    const plain = { log: (m: string) => void seen.push([m, undefined]), warn: (m: string, f?: unknown) => void seen.push([m, f]), error: () => undefined };
    structured(plain).debug('dropped');
    structured(plain).child({ tenantId: 't' }).child({ sessionId: 's' }).warn('w', { n: 1 });
    structured(plain).log('plain');
    expect(seen).toEqual([
      ['w', { tenantId: 't', sessionId: 's', n: 1 }],
      ['plain', undefined],
    ]);
  });
});
