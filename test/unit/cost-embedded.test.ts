import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoredEvent } from '../../libs/events';
import { SlotConfigError } from '../../libs/providers';
import { PlayClient } from '../../apps/play/play-client';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';
import { parseExposition, samplesOf } from '../support/prometheus-text';

/** The story slot's price, overridden in this test's llm.toml (round figures); the fast slot keeps its built-in one. */
const STORY = { input: 1, cachedInput: 0.25, output: 4 };
const LLM_TOML = `${readFileSync(join(__dirname, '..', '..', 'llm.toml'), 'utf8')}
[prices."gpt-4.1-mini"]
input = ${STORY.input}
cachedInput = ${STORY.cachedInput}
output = ${STORY.output}
asOf = 2026-12-05
source = "cost-embedded.test.ts"
`;

type Usage = { inputTokens: number; outputTokens: number; cachedInputTokens: number };
type Call = { callId: string; model: string; usage: Usage | null; estCostUsd: number | null; turnEstCostUsd: number | null };
type Turn = { turnId: string; estCostUsd: number | null; providerCachedTokens: number | null };
type Session = { sessionId: string; estCostUsd: number | null };

/** The operator's key: /metrics answers only to it. */
const ADMIN_KEY = randomBytes(32).toString('hex');

/**
 * Est. $ on the inspector's JSON views and in /metrics, on the embedded default playing Emberback on
 * the emulator: every figure is the recorded usage at the prices in force, computed here by hand.
 */
describe('cost in money (embedded default)', () => {
  let dataDir: string;
  let covel: EmbeddedEngine;
  let client: PlayClient;
  let tenantId: string;
  let sessionId: string;
  const turnIds: string[] = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'covel-cost-'));
    writeFileSync(join(dataDir, 'llm.toml'), LLM_TOML);
    covel = await startEmbedded({ COVEL_LLM_CONFIG: join(dataDir, 'llm.toml'), COVEL_ADMIN_API_KEY: ADMIN_KEY });
    const created = await covel.engine.tenants.create('cost');
    tenantId = created.tenant.id;
    client = new PlayClient(covel.baseUrl, created.apiKey);
    ({ id: sessionId } = await client.createSession({ worldId: 'emberback' }));
    for (const text of ['Walk to the river', 'Ask Mira about the ferry', 'Watch the vents']) {
      const r = await client.submit(sessionId, text);
      expect(await client.waitFor(r.executionId, 30_000)).toBe('committed');
      turnIds.push(r.turnId);
    }
  }, 120_000);
  afterAll(async () => {
    await covel?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }, 30_000);

  /** By hand: cached input at the cached price, the rest of the input at the input price, output at the output price. */
  const byHand = (model: string, u: Usage): number => {
    const p = model === 'gpt-4.1-mini' ? STORY : covel.engine.prices.priceOf(model)!;
    return ((u.inputTokens - u.cachedInputTokens) * p.input + u.cachedInputTokens * p.cachedInput + u.outputTokens * p.output) / 1e6;
  };
  /** callId → model and usage, from the log. */
  const recorded = async () => {
    const events: StoredEvent[] = await covel.engine.store.readStream(sessionId);
    const calls = new Map<string, { turnId: string; model: string; usage: Usage | null }>();
    for (const e of events) {
      if (e.type === 'llm.calling@1') calls.set(e.data.callId, { turnId: e.data.turnId, model: e.data.model, usage: null });
      if (e.type === 'llm.responded@1') calls.get(e.data.callId)!.usage = e.data.usage;
    }
    return calls;
  };

  it('each call of a turn carries its est. $ and the turn’s total; the turns list the same total', async () => {
    const calls = await recorded();
    const turns = await client.request<Turn[]>('GET', `/v1/sessions/${sessionId}/turns`);
    expect(turns.map((t) => t.turnId)).toEqual(turnIds);
    let cachedSeen = false;
    for (const turnId of turnIds) {
      const view = await client.request<Call[]>('GET', `/v1/sessions/${sessionId}/turns/${turnId}/calls`);
      expect(view.length).toBeGreaterThan(0);
      let total = 0;
      for (const call of view) {
        const logged = calls.get(call.callId)!;
        expect(call.usage).toEqual(logged.usage);
        expect(call.estCostUsd).toBeCloseTo(byHand(logged.model, logged.usage!), 12);
        expect(call.estCostUsd).toBeGreaterThan(0);
        if (logged.usage!.cachedInputTokens > 0) cachedSeen = true;
        total += call.estCostUsd!;
      }
      // the turn's total on every call of the answer, and on the turn in the list
      expect(new Set(view.map((c) => c.turnEstCostUsd)).size).toBe(1);
      expect(view[0].turnEstCostUsd).toBeCloseTo(total, 12);
      expect(turns.find((t) => t.turnId === turnId)!.estCostUsd).toBe(view[0].turnEstCostUsd);
    }
    // the emulator's cache answered from the second turn on: those tokens were priced as cached
    expect(cachedSeen).toBe(true);
    // both slots played: the overridden story price and the built-in fast one
    expect(new Set([...calls.values()].map((c) => c.model))).toEqual(new Set(['gpt-4.1-mini', 'gpt-4.1-nano']));
  });

  it('each session of the list carries the sum over its calls (once the reports projection caught up)', async () => {
    await caughtUp(covel);
    const calls = [...(await recorded()).values()];
    const expected = calls.reduce((n, c) => n + (c.usage ? byHand(c.model, c.usage) : 0), 0);
    expect(expected).toBeGreaterThan(0);
    const sessions = await client.request<Session[]>('GET', '/v1/sessions');
    expect(sessions).toHaveLength(1);
    expect(sessions[0].sessionId).toBe(sessionId);
    expect(sessions[0].estCostUsd).toBeCloseTo(expected, 10);
    const turns = await client.request<Turn[]>('GET', `/v1/sessions/${sessionId}/turns`);
    expect(sessions[0].estCostUsd).toBeCloseTo(
      turns.reduce((n, t) => n + t.estCostUsd!, 0),
      10,
    );
  });

  it('/metrics counts the cost by tenant id and model: the sum of the calls’ costs', async () => {
    await covel.engine.metrics.settled();
    const e = parseExposition(await (await fetch(`${covel.baseUrl}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).text());
    const views = await Promise.all(turnIds.map((t) => client.request<Call[]>('GET', `/v1/sessions/${sessionId}/turns/${t}/calls`)));
    const byModel = new Map<string, number>();
    for (const call of views.flat()) byModel.set(call.model, (byModel.get(call.model) ?? 0) + call.estCostUsd!);
    const samples = samplesOf(e, 'covel_model_cost_usd_total');
    expect(samples.map((s) => s.labels).sort((a, b) => a.model.localeCompare(b.model))).toEqual(
      [...byModel.keys()].sort().map((model) => ({ tenant: tenantId, model })),
    );
    for (const [model, usd] of byModel) expect(samplesOf(e, 'covel_model_cost_usd_total', { tenant: tenantId, model })[0].value).toBeCloseTo(usd, 12);
  });

  it('a bad price in llm.toml stops start-up with LLM_CONFIG_INVALID, naming the key path', async () => {
    const bad = mkdtempSync(join(tmpdir(), 'covel-cost-bad-'));
    const file = join(bad, 'llm.toml');
    writeFileSync(file, LLM_TOML.replace(`output = ${STORY.output}`, 'output = -4'));
    try {
      const outcome = await startEmbedded({ COVEL_LLM_CONFIG: file }, bad).then(
        async (started) => (await started.stop(), 'started'),
        (error: unknown) => error,
      );
      expect(outcome).toBeInstanceOf(SlotConfigError);
      expect((outcome as SlotConfigError).message).toMatch(new RegExp(`^${file}: prices\\."gpt-4\\.1-mini"\\.output: `));
    } finally {
      rmSync(bad, { recursive: true, force: true });
    }
  }, 60_000);
});

/** Polls until every async projection shard has applied the log (the sessions list reads prefix_reports). */
async function caughtUp(covel: EmbeddedEngine): Promise<void> {
  for (;;) {
    const status = await covel.engine.projector.status();
    if (status.every((p) => p.shards.every((s) => s.lag === 0))) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}
