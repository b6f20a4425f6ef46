import { randomBytes } from 'node:crypto';
import { ProviderEmulator } from '../../libs/emulator';
import type { StoredEvent } from '../../libs/events';
import { PlayClient } from '../../apps/play/play-client';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';
import { type GatedProvider, startGatedProvider } from '../support/gated-provider';
import { type Exposition, parseExposition, samplesOf, total } from '../support/prometheus-text';

/**
 * `GET /metrics` on the embedded default (API and worker in one process: one registry serves
 * both): after a few turns, an idempotent replay and a failed turn, each family is there with the
 * values the event log says.
 */
describe('Prometheus metrics (embedded default)', () => {
  /** The operator's key: /metrics answers only to it. */
  const adminKey = randomBytes(32).toString('hex');
  const asAdmin = { headers: { authorization: `Bearer ${adminKey}` } };
  let emulator: ProviderEmulator;
  let gate: GatedProvider;
  let covel: EmbeddedEngine;
  let player: PlayClient;
  let apiKey: string;
  let tenantId: string;
  let sessionId: string;
  const executions: string[] = [];

  beforeAll(async () => {
    emulator = await new ProviderEmulator().start();
    gate = await startGatedProvider(emulator.url);
    covel = await startEmbedded({ COVEL_EMULATOR_URL: gate.url, COVEL_ADMIN_API_KEY: adminKey });
    ({
      apiKey,
      tenant: { id: tenantId },
    } = await covel.engine.tenants.create('metrics'));
    player = new PlayClient(covel.baseUrl, apiKey);
    sessionId = (await player.createSession({})).id;
  }, 60_000);
  afterAll(async () => {
    await covel?.stop();
    await gate?.close();
    await emulator?.stop();
  }, 30_000);

  const scrape = async (): Promise<{ res: Response; e: Exposition }> => {
    const res = await fetch(`${covel.baseUrl}/metrics`, asAdmin);
    return { res, e: parseExposition(await res.clone().text()) };
  };
  const post = (path: string, body: unknown, idempotencyKey: string) =>
    fetch(`${covel.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
      body: JSON.stringify(body),
    });
  /** The engine's log across the test's session. */
  const log = async (): Promise<StoredEvent[]> => covel.engine.store.readStream(sessionId);

  it('counts a tenant as active while its turn runs', async () => {
    const hold = gate.holdNext(2);
    const { executionId } = await player.submit(sessionId, 'Look around');
    executions.push(executionId);
    await hold.reached;
    const { res, e } = await scrape().finally(() => hold.release());
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain;.*version=0\.0\.4/);
    expect(samplesOf(e, 'covel_active_tenants')).toEqual([{ name: 'covel_active_tenants', labels: {}, value: 1 }]);
    expect(await player.waitFor(executionId, 30_000)).toBe('committed');
  }, 60_000);

  it('exposes each family with the values of the event log after turns, a replay and a failure', async () => {
    for (const text of ['Walk to the river', 'Ask the ferryman']) {
      const { executionId } = await player.submit(sessionId, text);
      executions.push(executionId);
      expect(await player.waitFor(executionId, 30_000)).toBe('committed');
    }
    // the same Idempotency-Key twice: one input, the second answer a replay
    const first = await post(`/v1/sessions/${sessionId}/inputs`, { text: 'Cross the water' }, 'metrics-key-1');
    const again = await post(`/v1/sessions/${sessionId}/inputs`, { text: 'Cross the water' }, 'metrics-key-1');
    expect([first.status, again.status, again.headers.get('idempotent-replayed')]).toEqual([202, 202, 'true']);
    const replayed = (await first.json()) as { executionId: string };
    executions.push(replayed.executionId);
    expect(await player.waitFor(replayed.executionId, 30_000)).toBe('committed');
    // a provider that refuses every request: the turn fails for good
    emulator.injectFault({ status: 400, times: 1_000, message: 'emulated refusal' });
    const { executionId: failing } = await player.submit(sessionId, 'Sing to the river');
    await expect(player.waitFor(failing, 30_000)).rejects.toThrow(/turn failed/);
    await covel.engine.metrics.settled();

    const events = await log();
    const { e } = await scrape();
    // turns: committed by kind, failed by code, exactly as the log has them
    const committed = events.filter((x) => x.type === 'turn.committed@1');
    const inputs = committed.filter((x) => x.type === 'turn.committed@1' && x.data.messages[0]?.sourceType === 'player').length;
    expect(inputs).toBe(4);
    expect(total(e, 'covel_turns_committed_total', { kind: 'input' })).toBe(inputs);
    expect(total(e, 'covel_turns_committed_total')).toBe(committed.length);
    const failed = events.filter((x) => x.type === 'execution.failed@1');
    expect(failed).toHaveLength(1);
    const code = failed[0].type === 'execution.failed@1' ? failed[0].data.error.code : '';
    expect(samplesOf(e, 'covel_turns_failed_total')).toEqual([{ name: 'covel_turns_failed_total', labels: { code }, value: 1 }]);
    // the replay, counted once, by route pattern (no session id)
    expect(samplesOf(e, 'covel_idempotent_replays_total')).toEqual([
      { name: 'covel_idempotent_replays_total', labels: { route: 'POST /v1/sessions/:id/inputs' }, value: 1 },
    ]);

    // tokens: the sums of the usage llm.responded recorded, per runtime
    const usage = new Map<string, { input: number; output: number; cached: number }>();
    for (const x of events) {
      if (x.type !== 'llm.responded@1') continue;
      const key = `${x.data.pluginId}/${x.data.runtimeId}`;
      const u = usage.get(key) ?? { input: 0, output: 0, cached: 0 };
      usage.set(key, {
        input: u.input + x.data.usage.inputTokens,
        output: u.output + x.data.usage.outputTokens,
        cached: u.cached + x.data.usage.cachedInputTokens,
      });
    }
    expect(usage.size).toBeGreaterThan(0);
    for (const [runtime, u] of usage) {
      expect([runtime, total(e, 'covel_model_input_tokens_total', { runtime })]).toEqual([runtime, u.input]);
      expect([runtime, total(e, 'covel_model_output_tokens_total', { runtime })]).toEqual([runtime, u.output]);
      expect([runtime, total(e, 'covel_model_cached_input_tokens_total', { runtime })]).toEqual([runtime, u.cached]);
      expect(u.input).toBeGreaterThan(0);
      expect(total(e, 'covel_model_cache_read_share', { runtime })).toBeCloseTo(u.cached / u.input, 10);
    }
    expect(total(e, 'covel_model_input_tokens_total')).toBe([...usage.values()].reduce((n, u) => n + u.input, 0));

    // model calls: every answered call timed, every refused one counted as an error (per provider and model)
    const responded = events.filter((x) => x.type === 'llm.responded@1').length;
    const calling = events.filter((x) => x.type === 'llm.calling@1');
    expect(total(e, 'covel_model_call_duration_seconds_count')).toBe(responded);
    expect(total(e, 'covel_model_call_errors_total')).toBe(calling.length - responded);
    expect(total(e, 'covel_model_call_errors_total')).toBeGreaterThanOrEqual(1);
    const first1 = calling[0].type === 'llm.calling@1' ? calling[0].data : null;
    expect(total(e, 'covel_model_call_duration_seconds_count', { provider: first1!.provider, model: first1!.model })).toBeGreaterThan(0);

    // turn latency and overhead: one observation per committed turn; overhead ≤ latency
    expect(total(e, 'covel_turn_latency_seconds_count')).toBe(committed.length);
    expect(total(e, 'covel_turn_engine_overhead_seconds_count')).toBe(committed.length);
    expect(total(e, 'covel_turn_engine_overhead_seconds_sum')).toBeLessThanOrEqual(total(e, 'covel_turn_latency_seconds_sum'));
    expect(total(e, 'covel_turn_latency_seconds_sum')).toBeGreaterThan(0);
    // stage and runtime durations: a runtime label per runtime that produced an output, with its stage
    const outputs = events.filter((x) => x.type === 'runtime.output.produced@1');
    for (const o of outputs) {
      if (o.type !== 'runtime.output.produced@1') continue;
      const labels = { runtime: `${o.data.pluginId}/${o.data.runtimeId}`, stage: o.data.stage ?? '(none)' };
      expect([labels, total(e, 'covel_runtime_duration_seconds_count', labels)]).toEqual([labels, expect.any(Number)]);
      expect(total(e, 'covel_runtime_duration_seconds_count', labels)).toBeGreaterThan(0);
      expect(total(e, 'covel_stage_duration_seconds_count', { stage: labels.stage })).toBeGreaterThan(0);
    }
    expect(total(e, 'covel_runtime_duration_seconds_count')).toBe(outputs.length);

    // queues: the wait of every job's first start, and the depth of both queues on scrape
    expect(total(e, 'covel_queue_wait_seconds_count', { queue: 'covel-turns' })).toBeGreaterThanOrEqual(executions.length + 1);
    // runtime jobs only for stages of several runtimes: this session's narrator runs inline in its turn jobs
    expect(total(e, 'covel_queue_wait_seconds_count', { queue: 'covel-runtimes' })).toBe(0);
    for (const queue of ['covel-turns', 'covel-runtimes'])
      expect([queue, samplesOf(e, 'covel_queue_jobs', { queue }).map((s) => s.labels.state)]).toEqual([queue, expect.arrayContaining(['waiting', 'active'])]);
    // nothing runs now: no active tenant
    expect(total(e, 'covel_active_tenants')).toBe(0);

    // cost: a series per tenant and model, labelled by the tenant's id (stable and unique where names are neither;
    // tenants are created by an operator, so the label stays bounded), none for another tenant
    expect(samplesOf(e, 'covel_model_cost_usd_total').map((s) => s.labels.tenant)).toEqual(samplesOf(e, 'covel_model_cost_usd_total').map(() => tenantId));
    expect(total(e, 'covel_model_cost_usd_total', { tenant: tenantId, model: first1!.model })).toBeGreaterThan(0);

    // labels are bounded: no id of a session, execution or call anywhere; a tenant's id only as the cost counter's `tenant`
    for (const s of e.samples)
      for (const [label, v] of Object.entries(s.labels)) {
        if (s.name === 'covel_model_cost_usd_total' && label === 'tenant') continue;
        expect([s.name, v]).not.toEqual([s.name, expect.stringMatching(/[0-9a-f]{8}-[0-9a-f]{4}-/)]);
      }
    for (const family of [
      'covel_turns_committed_total',
      'covel_turns_failed_total',
      'covel_turn_latency_seconds',
      'covel_turn_engine_overhead_seconds',
      'covel_stage_duration_seconds',
      'covel_runtime_duration_seconds',
      'covel_model_call_duration_seconds',
      'covel_model_call_errors_total',
      'covel_model_input_tokens_total',
      'covel_model_output_tokens_total',
      'covel_model_cached_input_tokens_total',
      'covel_model_cache_read_share',
      'covel_model_cost_usd_total',
      'covel_queue_jobs',
      'covel_queue_wait_seconds',
      'covel_projection_lag_events',
      'covel_idempotent_replays_total',
      'covel_active_tenants',
    ])
      expect([family, e.types.has(family)]).toEqual([family, true]);
  }, 120_000);

  it('reports the lag of every async projection shard, down to 0 once the projector caught up', async () => {
    let e: Exposition | null = null;
    for (let i = 0; i < 200; i++) {
      e = (await scrape()).e;
      const lag = samplesOf(e, 'covel_projection_lag_events');
      if (lag.length > 0 && lag.every((s) => s.value === 0)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const lag = samplesOf(e!, 'covel_projection_lag_events');
    const projections = new Set(lag.map((s) => s.labels.projection));
    expect(projections.size).toBeGreaterThan(0);
    const status = await covel.engine.projector.status();
    expect([...projections].sort()).toEqual(
      status
        .filter((p) => p.shards.length > 0)
        .map((p) => p.name)
        .sort(),
    );
    expect(lag).toHaveLength(status.reduce((n, p) => n + p.shards.length, 0));
    expect(lag.every((s) => /^\d+$/.test(s.labels.shard) && s.value === 0)).toBe(true);
  }, 60_000);

  it('the queue dashboard is off by default (404); /metrics answers GET only', async () => {
    expect((await fetch(`${covel.baseUrl}/admin/queues`)).status).toBe(404);
    expect((await fetch(`${covel.baseUrl}/admin/queues`, { headers: { authorization: `Bearer ${apiKey}` } })).status).toBe(404);
    expect((await fetch(`${covel.baseUrl}/metrics`, { method: 'POST' })).status).toBe(404);
  });

  it('/metrics answers only to the operator: no key, a tenant key (every scope) or a wrong key is a 401; Basic with the admin key works too', async () => {
    const noKey = await fetch(`${covel.baseUrl}/metrics`);
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toEqual({ error: { code: 'ADMIN_KEY_REQUIRED', message: expect.any(String) } });
    expect((await fetch(`${covel.baseUrl}/metrics`, { headers: { authorization: `Bearer ${apiKey}` } })).status).toBe(401);
    expect((await fetch(`${covel.baseUrl}/metrics`, { headers: { authorization: `Bearer ${adminKey}x` } })).status).toBe(401);
    const basic = `Basic ${Buffer.from(`prometheus:${adminKey}`).toString('base64')}`;
    expect((await fetch(`${covel.baseUrl}/metrics`, { headers: { authorization: basic } })).status).toBe(200);
  });

  it('without an admin key configured, /metrics on the API port answers no one (COVEL_METRICS_PORT is the keyless listener)', async () => {
    const other = await startEmbedded({ COVEL_EMULATOR_URL: gate.url });
    try {
      const res = await fetch(`${other.baseUrl}/metrics`, { headers: { authorization: `Bearer ${adminKey}` } });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/COVEL_METRICS_PORT/);
      // nor are there operator routes for tenants (a 404 like any unknown path)
      expect((await fetch(`${other.baseUrl}/admin/tenants`, { headers: { authorization: `Bearer ${adminKey}` } })).status).toBe(404);
    } finally {
      await other.stop();
    }
  }, 60_000);

  it('keeps one registry per engine: a second engine in this process counts its own turns only', async () => {
    const other = await startEmbedded({ COVEL_EMULATOR_URL: gate.url, COVEL_ADMIN_API_KEY: adminKey });
    try {
      const e = parseExposition(await (await fetch(`${other.baseUrl}/metrics`, asAdmin)).text());
      expect(total(e, 'covel_turns_committed_total')).toBe(0);
      expect(total(e, 'covel_model_input_tokens_total')).toBe(0);
      expect(samplesOf(e, 'covel_model_cost_usd_total')).toEqual([]);
    } finally {
      await other.stop();
    }
  }, 60_000);
});
