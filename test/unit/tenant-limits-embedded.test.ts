import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication, INestApplicationContext } from '@nestjs/common';
import { createApiApp } from '../../apps/api/create-api-app';
import { PlayClient } from '../../apps/play/play-client';
import { createWorkerApp } from '../../apps/worker/create-worker-app';
import { createEngine, type Engine, LIMITS_CACHE_MS, loadConfig } from '../../libs/engine';
import { rebuildInline, tenantLimitsProjection, tenantStreamId } from '../../libs/events';

const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Issue 32 item 2 on the embedded default (PGlite, in-process queue and buckets, the emulator):
 * limits are tenant settings changed by the operator (admin key) and recorded as events; the
 * request rate (429 + RateLimit-* headers); the spend budget against the usage projection after real turns (402, nothing appended); tenants apart.
 */
describe('tenant limits (embedded)', () => {
  const adminKey = randomBytes(32).toString('hex');
  let engine: Engine;
  let worker: INestApplicationContext;
  let api: INestApplication;
  let baseUrl: string;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'covel-test-'));
    const { DATABASE_URL, REDIS_URL, OPENAI_API_KEY, COVEL_EMULATOR_URL, ...inherited } = process.env;
    // model calls wait 300 ms: a turn then lasts longer than a few posts (the in-flight test holds the
    // posts made while the first turn runs; with its stages inline an Emberback turn can end within them)
    const config = loadConfig({ ...inherited, COVEL_DATA_DIR: dir, PORT: '0', COVEL_ADMIN_API_KEY: adminKey, COVEL_EMULATOR_DELAY_MS: '300' });
    engine = await createEngine(config, 'all', quiet);
    worker = await createWorkerApp(engine);
    await worker.init();
    api = await createApiApp(engine, { logger: false });
    await api.listen(0, '127.0.0.1');
    baseUrl = (await api.getUrl()).replace('[::1]', '127.0.0.1');
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    await worker?.close();
    await engine?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const newTenant = async (name: string) => {
    const { tenant, apiKey } = await engine.tenants.create(name);
    return { id: tenant.id, apiKey, client: new PlayClient(baseUrl, apiKey) };
  };
  const call = async (method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a test reads the answers' fields freely
    return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : null) as Record<string, any> };
  };
  const putLimits = (tenantId: string, limits: unknown) => call('PUT', `/admin/tenants/${tenantId}/limits`, adminKey, limits);
  // the tenant's limit changes (its stream also holds its creation and its keys)
  const tenantEvents = async (tenantId: string) =>
    (await engine.store.readStream(tenantStreamId(tenantId), 0, 100)).filter((e) => e.type === 'tenant.limits-changed@1');

  it('the operator sets a tenant’s limits (admin key): recorded as tenant.limits-changed@1 by operator; the tenant reads its own, another tenant its defaults', async () => {
    const alice = await newTenant('alice');
    const bob = await newTenant('bob');
    expect((await call('GET', `/admin/tenants/${alice.id}/limits`, adminKey)).body).toMatchObject({
      tenantId: alice.id,
      limits: {},
      effective: { requestsPerSecond: 1000, burst: 5000, maxInFlight: null, budget: null },
      changedBy: null,
    });
    const limits = { requestsPerSecond: 50, burst: 100, maxInFlight: 3, budget: { period: 'month', maxTokens: 1_000_000, maxUsd: 25 } };
    const put = await putLimits(alice.id, limits);
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ tenantId: alice.id, limits, effective: limits, changedBy: 'operator' });
    const events = await tenantEvents(alice.id);
    expect(events.map((e) => [e.type, e.tenantId, e.data])).toEqual([['tenant.limits-changed@1', alice.id, { tenantId: alice.id, limits, by: 'operator' }]]);
    expect((await call('GET', '/v1/limits', alice.apiKey)).body).toMatchObject({ tenantId: alice.id, limits, changedBy: 'operator' });
    // isolation: bob's limits are his own (the defaults), and bob's key never opens the admin routes
    expect((await call('GET', '/v1/limits', bob.apiKey)).body).toMatchObject({ tenantId: bob.id, limits: {}, effective: { requestsPerSecond: 1000 } });
    expect((await call('GET', `/admin/tenants/${alice.id}/limits`, bob.apiKey)).status).toBe(401);
    expect((await call('PUT', `/admin/tenants/${bob.id}/limits`, bob.apiKey, { requestsPerSecond: 1e6 })).status).toBe(401);
    expect(await tenantEvents(bob.id)).toEqual([]);
    expect(await engine.limits.maxInFlight(alice.id)).toBe(3);
    expect(await engine.limits.maxInFlight(bob.id)).toBeNull();
    // a second change replaces the whole object (absent: the defaults again)
    expect((await putLimits(alice.id, { burst: 7 })).body).toMatchObject({
      limits: { burst: 7 },
      effective: { requestsPerSecond: 1000, burst: 7, maxInFlight: null, budget: null },
    });
    await sleep(LIMITS_CACHE_MS + 50);
    expect(await engine.limits.maxInFlight(alice.id)).toBeNull();
  });

  it('bad input: 400 naming the field; an unknown tenant: 404; no admin key: 401', async () => {
    const carol = await newTenant('carol');
    const bad = async (body: unknown, path: string) => {
      const res = await putLimits(carol.id, body);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('INVALID_LIMITS');
      expect(res.body.issues.map((i: { path: string }) => i.path)).toContain(path);
    };
    await bad({ requestsPerSecond: -1 }, 'requestsPerSecond');
    await bad({ requestsPerSecond: 'fast' }, 'requestsPerSecond');
    await bad({ burst: 1.5 }, 'burst');
    await bad({ maxInFlight: 0 }, 'maxInFlight');
    await bad({ budget: { period: 'week', maxTokens: 5 } }, 'budget.period');
    await bad({ budget: { period: 'day' } }, 'budget');
    await bad({ budget: { period: 'day', maxUsd: -2 } }, 'budget.maxUsd');
    await bad({ requestPerSecond: 5 }, 'requestPerSecond');
    await bad([1], '(body)');
    const bodiless = await fetch(`${baseUrl}/admin/tenants/${carol.id}/limits`, { method: 'PUT', headers: { authorization: `Bearer ${adminKey}` } });
    expect([bodiless.status, ((await bodiless.json()) as { code: string }).code]).toEqual([400, 'INVALID_LIMITS']);
    const malformed = await fetch(`${baseUrl}/admin/tenants/${carol.id}/limits`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: '{"burst":',
    });
    expect(malformed.status).toBe(400);
    expect(await tenantEvents(carol.id)).toEqual([]);
    const unknown = await putLimits('00000000-0000-4000-8000-000000000000', { burst: 5 });
    expect([unknown.status, unknown.body.code]).toEqual([404, 'TENANT_NOT_FOUND']);
    expect((await call('GET', '/admin/tenants/nobody/limits', adminKey)).status).toBe(404);
    expect((await fetch(`${baseUrl}/admin/tenants/${carol.id}/limits`)).status).toBe(401);
  });

  it('request rate: a burst over the limit gets 429 RATE_LIMITED with Retry-After and RateLimit-* headers, the rest pass; another tenant is untouched', async () => {
    const dave = await newTenant('dave');
    const erin = await newTenant('erin');
    await putLimits(dave.id, { requestsPerSecond: 0.5, burst: 5 });
    await sleep(LIMITS_CACHE_MS + 50);
    const answers = [];
    for (let i = 0; i < 8; i++) answers.push(await call('GET', '/v1/sessions', dave.apiKey));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    expect(answers.slice(0, 5).map((a) => a.headers.get('ratelimit-remaining'))).toEqual(['4', '3', '2', '1', '0']);
    expect(answers[0].headers.get('ratelimit-limit')).toBe('5');
    expect(Number(answers[0].headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);
    // draft-ietf-httpapi-ratelimit-headers-08+: the policy (5 tokens, 10 s to fill at 0.5/s) and the state
    expect(answers.slice(0, 5).map((a) => a.headers.get('ratelimit-policy'))).toEqual(Array(5).fill('"default";q=5;w=10'));
    expect(answers.slice(0, 5).map((a) => /^"default";r=(\d+);t=(\d+)$/.exec(a.headers.get('ratelimit') ?? '')?.[1])).toEqual(['4', '3', '2', '1', '0']);
    expect(Number(/;t=(\d+)$/.exec(answers[4].headers.get('ratelimit') ?? '')?.[1])).toBe(Number(answers[4].headers.get('ratelimit-reset')));
    const refused = answers[5];
    expect(refused.body).toMatchObject({ statusCode: 429, code: 'RATE_LIMITED' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(2);
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(refused.headers.get('ratelimit')).toMatch(/^"default";r=0;t=\d+$/);
    // a body is never read on a refused request: a POST is refused the same way, nothing appended
    const post = await call('POST', '/v1/sessions', dave.apiKey, {});
    expect([post.status, post.body.code]).toEqual([429, 'RATE_LIMITED']);
    // erin's bucket is her own (the defaults)
    for (let i = 0; i < 10; i++) {
      const res = await call('GET', '/v1/sessions', erin.apiKey);
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-limit')).toBe('5000');
    }
    // raised by the operator: in force without a restart
    await putLimits(dave.id, { requestsPerSecond: 1000, burst: 50 });
    await sleep(LIMITS_CACHE_MS + 50);
    expect((await call('GET', '/v1/sessions', dave.apiKey)).status).toBe(200);
  });

  it('budget: a tenant at its budget after real turns gets 402 BUDGET_EXHAUSTED and nothing is appended; raising it lets the next input through; another tenant plays on', async () => {
    const frank = await newTenant('frank');
    const grace = await newTenant('grace');
    const { id: sessionId } = await frank.client.createSession({ worldId: 'emberback' });
    // sent with an Idempotency-Key: its retry (the 202 lost) is answered again at the budget below
    const idempotent = { 'idempotency-key': 'frank-look-around' };
    const accepted = await call('POST', `/v1/sessions/${sessionId}/inputs`, frank.apiKey, { text: 'look around' }, idempotent);
    expect(accepted.status).toBe(202);
    const first = accepted.body as { executionId: string };
    expect(await frank.client.waitFor(first.executionId, 60_000)).toBe('committed');
    // the usage projection (async) counts the turn's calls
    const usedSoFar = () => engine.usage.totals({ tenantId: frank.id, from: new Date(Date.now() - 60_000), to: new Date() });
    // every call of the turn counted (a turn makes several: a partial count would be a budget the turn itself passes)
    await engine.projector.drain();
    const used = await usedSoFar();
    expect(used.inputTokens + used.outputTokens).toBeGreaterThan(0);
    // at its budget: the tokens it used so far
    await putLimits(frank.id, { budget: { period: 'day', maxTokens: used.inputTokens + used.outputTokens } });
    await sleep(LIMITS_CACHE_MS + 50);
    const version = await engine.store.streamVersion(sessionId);
    const refused = await call('POST', `/v1/sessions/${sessionId}/inputs`, frank.apiKey, { text: 'open the door' });
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({ code: 'BUDGET_EXHAUSTED', details: { period: 'day', exhausted: 'maxTokens' } });
    const tomorrow = new Date();
    tomorrow.setUTCHours(24, 0, 0, 0);
    expect(refused.body.details.resetsAt).toBe(tomorrow.toISOString());
    // the retry of an input accepted before is replayed, not refused (the idempotency contract): nothing new starts
    const replayed = await call('POST', `/v1/sessions/${sessionId}/inputs`, frank.apiKey, { text: 'look around' }, idempotent);
    expect([replayed.status, replayed.headers.get('idempotent-replayed'), replayed.body.executionId]).toEqual([202, 'true', first.executionId]);
    // another tenant's append under the same key does not let this one through
    const graceSession = await grace.client.createSession({ worldId: 'emberback' });
    const otherKey = { 'idempotency-key': 'grace-key' };
    expect((await call('POST', `/v1/sessions/${graceSession.id}/inputs`, grace.apiKey, { text: 'wait' }, otherKey)).status).toBe(202);
    expect((await call('POST', `/v1/sessions/${sessionId}/inputs`, frank.apiKey, { text: 'wait' }, otherKey)).status).toBe(402);
    const lastTurnId = (await engine.readModels.execution(frank.id, first.executionId))!.turnId;
    const input = (await engine.store.readStream(sessionId, 0, 100)).find((e) => e.type === 'player-input.submitted@1');
    const inputMessageId = input?.type === 'player-input.submitted@1' ? input.data.messageId : '';
    // every request that would start model calls: a regeneration, an edit that regenerates, an activation, a world generation
    for (const [method, path, body] of [
      ['POST', `/v1/sessions/${sessionId}/turns/${lastTurnId}/retry`, undefined],
      ['PATCH', `/v1/sessions/${sessionId}/messages/${inputMessageId}`, { text: 'look around twice', regenerate: true }],
      ['POST', `/v1/sessions/${sessionId}/activations`, { pluginId: 'narrator', runtimeId: 'story' }],
      ['POST', '/v1/worlds/generate', { description: 'a quiet island' }],
      // whatever the letter case (the router matches it)
      ['POST', `/v1/sessions/${sessionId}/INPUTS`, { text: 'open the door' }],
      ['POST', '/v1/Worlds/Generate', { description: 'a quiet island' }],
    ] as const)
      expect([path, (await call(method, path, frank.apiKey, body)).status]).toEqual([path, 402]);
    // nothing was appended; reads still answer
    expect(await engine.store.streamVersion(sessionId)).toBe(version);
    expect((await call('GET', `/v1/sessions/${sessionId}`, frank.apiKey)).status).toBe(200);
    // grace (no budget) plays on
    const { id: other } = await grace.client.createSession({ worldId: 'emberback' });
    expect(await grace.client.waitFor((await grace.client.submit(other, 'wait')).executionId, 60_000)).toBe('committed');
    // raised: the next input commits
    await putLimits(frank.id, { budget: { period: 'day', maxTokens: 10 * (used.inputTokens + used.outputTokens) } });
    await sleep(LIMITS_CACHE_MS + 50);
    const next = await frank.client.submit(sessionId, 'open the door');
    expect(await frank.client.waitFor(next.executionId, 60_000)).toBe('committed');
  }, 120_000);

  it('executions in flight: a tenant with maxInFlight 1 runs one turn at a time (the others held by the queue), another tenant is not held', async () => {
    const hank = await newTenant('hank');
    const ivy = await newTenant('ivy');
    expect((await putLimits(hank.id, { maxInFlight: 1 })).status).toBe(200);
    await sleep(LIMITS_CACHE_MS + 50);
    const sessions = await Promise.all([1, 2, 3].map(() => hank.client.createSession({ worldId: 'emberback' })));
    const submitted = [];
    for (const { id } of sessions) submitted.push(await hank.client.submit(id, 'look around'));
    // the first runs, the other two wait on hank's list (an Emberback turn takes far longer than three posts)
    const held = (await engine.queue.depth()).find((d) => d.queue === 'covel-turns' && d.state === 'held');
    expect(held?.jobs).toBe(2);
    // ivy (no cap) is admitted at once and plays meanwhile
    const { id: ivySession } = await ivy.client.createSession({ worldId: 'emberback' });
    expect(await ivy.client.waitFor((await ivy.client.submit(ivySession, 'wait')).executionId, 60_000)).toBe('committed');
    for (const s of submitted) expect(await hank.client.waitFor(s.executionId, 60_000)).toBe('committed');
    // hank's three turns ran one after another: each started after the one before it ended
    const spans = [];
    for (const { id } of sessions) {
      const events = await engine.store.readStream(id, 0, 1000);
      const at = (type: string) => events.find((e) => e.type === type)!.globalPosition;
      spans.push({ started: at('execution.started@1'), ended: at('turn.committed@1') });
    }
    spans.sort((a, b) => a.started - b.started);
    for (let i = 1; i < spans.length; i++) expect(spans[i].started).toBeGreaterThan(spans[i - 1].ended);
  }, 120_000);

  it('a replay rebuilds tenant_limits from the log alone', async () => {
    const before = await engine.database.db.selectFrom('tenant_limits').selectAll().orderBy('stream_id').execute();
    expect(before.length).toBeGreaterThan(0);
    await engine.database.db.deleteFrom('tenant_limits').execute();
    const result = await rebuildInline({ db: engine.database.db, projections: [tenantLimitsProjection] });
    expect(result.failures).toEqual([]);
    expect(await engine.database.db.selectFrom('tenant_limits').selectAll().orderBy('stream_id').execute()).toEqual(before);
  });
});
