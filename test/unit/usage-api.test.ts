import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { PlayClient } from '../../apps/play/play-client';
import type { StoredEvent } from '../../libs/events';
import { estimateCostUsd, type PriceTable, roundUsd } from '../../libs/providers';
import type { UsageReport } from '../../libs/usage';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';
import { playTurns } from '../support/turns';

// Ten turns meter every plugin runtime (ten runtimes, 102 calls) and cycle the moves twice; 50 turns
// (the first size, 18 CPU-s) metered the same runtimes and did not compact either, so they crossed no
// further boundary of the usage view.
const TURNS = 10;
const MOVES = [
  'Look around the square',
  'Walk down to the river',
  'Ask Mira about the ferry',
  'Listen for the bell',
  'Greet the salt-trader the caravan left behind',
];
const ADMIN_KEY = randomBytes(32).toString('hex');
const DAY_MS = 86_400_000;
const day = (offset: number) => new Date(Date.now() + offset * DAY_MS).toISOString().slice(0, 10);

type Sums = { calls: number; inputTokens: number; cachedInputTokens: number; outputTokens: number; estCostUsd: number };
type Group = 'day' | 'session' | 'model' | 'runtime';

/**
 * The sums straight from the log, written apart from the projection: each request event names its
 * call's model and runtime, the first answer of each call counts its usage on the answer's UTC day,
 * each call priced on its own (the inspector's estimate) and the prices summed.
 */
function logSums(events: readonly StoredEvent[], prices: PriceTable, groupBy: Group): Map<string | null, Sums> {
  const calls = new Map<string, { model: string; runtime: string }>();
  const counted = new Set<string>();
  const out = new Map<string | null, Sums>();
  const raw = new Map<string | null, number>();
  for (const e of events) {
    if (e.type === 'llm.calling@1') calls.set(e.data.callId, { model: e.data.model, runtime: `${e.data.pluginId}/${e.data.runtimeId}` });
    if (e.type === 'compaction.summary-requested@1') calls.set(e.data.requestId, { model: e.data.model, runtime: `compaction:${e.data.pluginId}` });
    const answer =
      e.type === 'llm.responded@1'
        ? { id: e.data.callId, usage: e.data.usage }
        : e.type === 'compaction.summary-responded@1'
          ? { id: e.data.requestId, usage: e.data.usage }
          : null;
    if (!answer || counted.has(answer.id)) continue;
    counted.add(answer.id);
    const call = calls.get(answer.id)!;
    const key = { day: e.recordedAt.slice(0, 10), session: e.streamId, model: call.model, runtime: call.runtime }[groupBy];
    const sums = out.get(key) ?? { calls: 0, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, estCostUsd: 0 };
    sums.calls += 1;
    sums.inputTokens += answer.usage.inputTokens;
    sums.cachedInputTokens += answer.usage.cachedInputTokens;
    sums.outputTokens += answer.usage.outputTokens;
    raw.set(key, (raw.get(key) ?? 0) + estimateCostUsd(answer.usage, prices.priceOf(call.model))!);
    sums.estCostUsd = roundUsd(raw.get(key)!);
    out.set(key, sums);
  }
  return out;
}

async function get(covel: EmbeddedEngine, path: string, key: string) {
  const res = await fetch(`${covel.baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: (await res.json()) as UsageReport & { code?: string; issues?: { path: string; message: string }[] } };
}

/** Waits until the session's log stops growing (the activations after a turn have ended) and the usage view has its last event. */
async function settled(covel: EmbeddedEngine, sessionId: string): Promise<StoredEvent[]> {
  let events = await covel.engine.store.readStream(sessionId);
  for (;;) {
    await new Promise((r) => setTimeout(r, 750));
    const again = await covel.engine.store.readStream(sessionId);
    if (again.length === events.length) break;
    events = again;
  }
  const reached = await covel.engine.projector.waitFor({ projection: 'usage', streamId: sessionId, timeoutMs: 20_000 });
  expect(reached).toEqual({ status: 'reached' });
  return events;
}

const usageTable = async (covel: EmbeddedEngine) => ({
  daily: (await sql`select * from usage_daily order by tenant_id, day, stream_id, model, runtime`.execute(covel.engine.database.db)).rows,
  calls: (await sql`select * from usage_calls order by stream_id, call_id`.execute(covel.engine.database.db)).rows,
});

describe('GET /v1/usage: a 10-turn Emberback session with every plugin (embedded default, emulator)', () => {
  let covel: EmbeddedEngine;
  let alice: PlayClient;
  let bob: PlayClient;
  let aliceKey: string;
  let bobKey: string;
  let aliceId: string;
  let bobId: string;
  let aliceSession: string;
  let bobSession: string;
  let aliceEvents: StoredEvent[];
  let bobEvents: StoredEvent[];
  const range = `from=${day(-1)}&to=${day(1)}`;

  beforeAll(async () => {
    covel = await startEmbedded({ COVEL_ADMIN_API_KEY: ADMIN_KEY });
    ({
      apiKey: aliceKey,
      tenant: { id: aliceId },
    } = await covel.engine.tenants.create('alice'));
    ({
      apiKey: bobKey,
      tenant: { id: bobId },
    } = await covel.engine.tenants.create('bob'));
    alice = new PlayClient(covel.baseUrl, aliceKey);
    bob = new PlayClient(covel.baseUrl, bobKey);
    aliceSession = (await alice.createSession({ worldId: 'emberback' })).id;
    bobSession = (await bob.createSession()).id;
    await playTurns(
      alice,
      aliceSession,
      Array.from({ length: TURNS }, (_, t) => `${MOVES[t % MOVES.length]} (${t})`),
      30_000,
    );
    await playTurns(bob, bobSession, ['Hello', 'Look around']);
    aliceEvents = await settled(covel, aliceSession);
    bobEvents = await settled(covel, bobSession);
  }, 900_000);
  afterAll(() => covel?.stop());

  it.each(['day', 'session', 'model', 'runtime'] as const)(
    'grouped by %s: equals the sums of the log (calls, each token count, est. cost)',
    async (groupBy) => {
      const { status, body } = await get(covel, `/v1/usage?${range}&groupBy=${groupBy}`, aliceKey);
      expect(status).toBe(200);
      const expected = logSums(aliceEvents, covel.engine.prices, groupBy);
      expect(body).toMatchObject({ from: day(-1), to: day(1), groupBy, unpricedModels: [], quarantinedEvents: 0 });
      expect(new Map(body.rows.map(({ key, ...sums }) => [key, sums]))).toEqual(expected);
      const total = logSums(aliceEvents, covel.engine.prices, 'session').get(aliceSession)!;
      expect(body.totals).toEqual(total);
      if (groupBy === 'runtime') {
        // every plugin's runtimes are metered, and the summaries of the compaction plugin if it compacted
        expect(body.rows.length).toBeGreaterThan(5);
        expect(body.rows.map((r) => r.key)).toEqual(expect.arrayContaining(['narrator/narrator']));
      }
    },
  );

  it('engine.usage.totals answers the same totals (what a spend budget reads); a timestamp stands for its UTC day', async () => {
    const totals = logSums(aliceEvents, covel.engine.prices, 'session').get(aliceSession);
    expect(await covel.engine.usage.totals({ tenantId: aliceId, from: new Date(Date.now() - DAY_MS), to: new Date(Date.now() + DAY_MS) })).toEqual(totals);
    const old = new Date('2020-01-01T00:00:00Z');
    expect(await covel.engine.usage.totals({ tenantId: aliceId, from: old, to: old })).toEqual({
      calls: 0,
      inputTokens: 0,
      cachedInputTokens: 0,
      outputTokens: 0,
      estCostUsd: 0,
    });
  });

  it('each tenant sees its own usage only; the operator sees every tenant (groupBy tenant, or one by tenantId)', async () => {
    const mine = await get(covel, `/v1/usage?${range}&groupBy=session`, bobKey);
    expect(mine.body.rows.map((r) => r.key)).toEqual([bobSession]);
    expect(mine.body.totals).toEqual(logSums(bobEvents, covel.engine.prices, 'session').get(bobSession));
    const aliceTotals = (await get(covel, `/v1/usage?${range}`, aliceKey)).body.totals;

    const admin = await get(covel, `/admin/usage?${range}&groupBy=tenant`, ADMIN_KEY);
    expect(admin.status).toBe(200);
    expect(new Map(admin.body.rows.map(({ key, ...sums }) => [key, sums]))).toEqual(
      new Map([
        [aliceId, aliceTotals],
        [bobId, mine.body.totals],
      ]),
    );
    const one = await get(covel, `/admin/usage?${range}&tenantId=${bobId}&groupBy=session`, ADMIN_KEY);
    expect(one.body.rows.map((r) => r.key)).toEqual([bobSession]);
    // the engine's reader: the same totals, one tenant at a time
    expect(await covel.engine.usage.totals({ tenantId: bobId, from: new Date(`${day(-1)}T00:00:00Z`), to: new Date(`${day(1)}T00:00:00Z`) })).toEqual(
      mine.body.totals,
    );
    // a tenant's key is not the admin key
    expect((await get(covel, `/admin/usage?${range}`, bobKey)).status).toBe(401);
  });

  it('a replay rebuilds the same rows from the log (rows dropped first)', async () => {
    const before = await usageTable(covel);
    await sql`delete from usage_daily`.execute(covel.engine.database.db);
    await sql`delete from usage_calls`.execute(covel.engine.database.db);
    const replayed = await covel.engine.projector.replay({ projection: 'usage' });
    expect(replayed.projections[0].quarantined).toEqual([]);
    expect(await usageTable(covel)).toEqual(before);
  });

  it.each([
    ['', 'from'],
    [`from=${day(0)}`, 'to'],
    [`from=2026-02-30&to=${day(0)}`, 'from'],
    [`from=${day(0)}&to=yesterday`, 'to'],
    [`from=${day(0)}&to=${day(0)}T10:00:00`, 'to'], // a timestamp needs its time zone
    [`from=${day(0)}&to=${day(-1)}`, 'to'],
    [`from=${day(-400)}&to=${day(0)}`, 'to'],
    [`from=${day(0)}&to=${day(0)}&groupBy=tenant`, 'groupBy'],
    [`from=${day(0)}&to=${day(0)}&tenantId=x`, '(query)'],
  ])('GET /v1/usage?%s is a 400 naming %s', async (query, field) => {
    const { status, body } = await get(covel, `/v1/usage?${query}`, aliceKey);
    expect(status).toBe(400);
    expect(body.code).toBe('INVALID_INPUT');
    expect(body.issues!.map((i) => i.path)).toContain(field);
  });

  it('GET /admin/usage with a bad parameter is a 400 naming it', async () => {
    const { status, body } = await get(covel, `/admin/usage?from=${day(0)}&to=${day(-2)}`, ADMIN_KEY);
    expect(status).toBe(400);
    expect(body.issues!.map((i) => i.path)).toEqual(['to']);
  });
});
