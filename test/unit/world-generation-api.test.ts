import { ProviderEmulator, type ScriptedCall, worldCreationReply } from '../../libs/emulator';
import { NARRATOR_ONLY_OPEN, narratorOnlyIssues } from '../../libs/plugins-sdk';
import { rebuildInline, type StoredEvent } from '../../libs/events';
import { engineInlineProjections } from '../../libs/engine';
import { PlayClient } from '../../apps/play/play-client';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';
import { countEvents } from '../support/world-files';
import { openStreamAt } from '../support/sse-client';
import { auditedIdentical, playTurns } from '../support/turns';

/** Issue 29 item 2: a world made from a description by a worker, its progress, its audit, offline. */

type Json = Record<string, unknown>;
interface Progress {
  jobId: string;
  status: string;
  progress: string;
  round: number;
  rounds: number;
  worldId: string | null;
  error: { code: string; reason: string } | null;
}

const call = async (baseUrl: string, key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, json: json as Json };
};

/** Long-polls the job until it has ended. */
async function ended(baseUrl: string, key: string, jobId: string): Promise<Progress> {
  for (let i = 0; i < 10; i++) {
    const { status, json } = await call(baseUrl, key, 'GET', `/v1/worlds/generate/${jobId}?waitMs=20000`);
    expect(status).toBe(200);
    const progress = json as unknown as Progress;
    if (progress.status === 'done' || progress.status === 'failed') return progress;
  }
  throw new Error(`job ${jobId} did not end`);
}

const jobEvents = (covel: EmbeddedEngine, jobId: string) => covel.engine.store.readStream(jobId);
/** How many worlds the job made (`world.created@1` whose provenance names it). */
const worldsOfJob = async (covel: EmbeddedEngine, jobId: string) =>
  (await covel.engine.database.db.selectFrom('events').selectAll().where('type', '=', 'world.created@1').execute()).filter(
    (row) => (row.data as { provenance: { jobId?: string } }).provenance.jobId === jobId,
  ).length;

describe('world creation from a description (offline emulator)', () => {
  let covel: EmbeddedEngine;
  let keyA = '';
  let keyB = '';
  beforeAll(async () => {
    covel = await startEmbedded();
    keyA = (await covel.engine.tenants.create('gen-a')).apiKey;
    keyB = (await covel.engine.tenants.create('gen-b')).apiKey;
  }, 60_000);
  afterAll(() => covel?.stop());

  it('POST /v1/worlds/generate answers 202 with a job; a worker makes the world (provenance generated), audited identical; three real turns play on it', async () => {
    const description = 'A lighthouse on a reef where the sea keeps its own records 🌊, kept by an עברית-speaking keeper. </world-brief> {{ language }}';
    const accepted = await call(covel.baseUrl, keyA, 'POST', '/v1/worlds/generate', { description, locale: 'en' }, { 'idempotency-key': 'gen-1' });
    expect(accepted.status).toBe(202);
    const jobId = String(accepted.json.jobId);
    expect(accepted.headers.get('location')).toBe(`/v1/worlds/generate/${jobId}`);
    // the same key and body: the same job, nothing new recorded
    const again = await call(covel.baseUrl, keyA, 'POST', '/v1/worlds/generate', { description, locale: 'en' }, { 'idempotency-key': 'gen-1' });
    expect([again.status, again.json.jobId, again.headers.get('idempotent-replayed')]).toEqual([202, jobId, 'true']);

    const done = await ended(covel.baseUrl, keyA, jobId);
    expect(done).toMatchObject({ status: 'done', progress: 'done', round: 0, rounds: 2, error: null });
    const world = await call(covel.baseUrl, keyA, 'GET', `/v1/worlds/${done.worldId}`);
    expect(world.status).toBe(200);
    expect(world.json).toMatchObject({
      revision: 1,
      builtIn: false,
      provenance: { kind: 'generated', jobId, model: 'gpt-4.1-mini', template: 'world-generation' },
      document: { seats: [{ id: 'wayfarer', characterId: 'wayfarer', primary: true }] },
    });
    expect(String((world.json.document as Json).description)).toContain('🌊');
    expect(await worldsOfJob(covel, jobId)).toBe(1);

    // the job's log: the request, the call before it was sent (its exact wire body) and its reply, the end
    const events = await jobEvents(covel, jobId);
    expect(events.map((e) => e.type)).toEqual([
      'world-generation.requested@1',
      'world-generation.call-requested@1',
      'world-generation.call-responded@1',
      'world-generation.completed@1',
    ]);
    const audit = await call(covel.baseUrl, keyA, 'GET', `/v1/worlds/generate/${jobId}/audit`);
    expect(audit.status).toBe(200);
    expect(audit.json).toMatchObject({ jobId, identical: true, calls: [{ round: 0, purpose: 'draft', template: 'world-generation', identical: true }] });

    // three real turns on the generated world: the narrator reads its lore
    const client = new PlayClient(covel.baseUrl, keyA);
    const { id: sessionId } = await client.createSession({ worldId: String(done.worldId) });
    const turnIds = await playTurns(client, sessionId, ['I knock at the gate', 'I offer the warden a true sentence', 'I walk into the fog']);
    expect(turnIds).toHaveLength(3);
    const session = await covel.engine.store.readStream(sessionId);
    const bodies = session.filter((e): e is Extract<StoredEvent, { type: 'llm.calling@1' }> => e.type === 'llm.calling@1').map((e) => e.data.body);
    expect(bodies.some((b) => b.includes('takes one true sentence from every traveller'))).toBe(true);
    expect(session.filter((e) => e.type === 'turn.committed@1')).toHaveLength(3);
    expect(await auditedIdentical(covel.engine, sessionId, turnIds)).toEqual([true, true, true]);
  }, 120_000);

  it('another tenant gets 404 for the job everywhere (progress, events, audit); a bad request is a 400 naming the field, nothing recorded', async () => {
    const { json } = await call(covel.baseUrl, keyA, 'POST', '/v1/worlds/generate', { description: '', locale: 'zh-Hans' });
    const jobId = String(json.jobId);
    await ended(covel.baseUrl, keyA, jobId);
    for (const path of [
      `/v1/worlds/generate/${jobId}`,
      `/v1/worlds/generate/${jobId}?waitMs=100`,
      `/v1/worlds/generate/${jobId}/events`,
      `/v1/worlds/generate/${jobId}/audit`,
    ]) {
      const res = await call(covel.baseUrl, keyB, 'GET', path);
      expect([path, res.status, res.json.code]).toEqual([path, 404, 'WORLD_GENERATION_NOT_FOUND']);
    }
    expect((await call(covel.baseUrl, keyB, 'GET', '/v1/worlds/generate/not-a-uuid')).json.code).toBe('WORLD_GENERATION_NOT_FOUND');
    const before = await countEvents(covel.engine.database.db);
    const bad = [
      [{ description: 'x', locale: 'not a tag!' }, 400, 'locale'],
      [{ description: 'x\u0000', locale: 'en' }, 400, 'description'],
      [{ description: 'x', locale: 'en', slot: 'nope' }, 400, 'slot'],
      [{ description: 'x', locale: 'en', plugins: ['no-such-plugin'] }, 400, 'plugins.0'],
      [{ description: 'x'.repeat(16_001), locale: 'en' }, 400, 'description'],
      [{ description: 'x', locale: 'en', extra: 1 }, 400, '(body)'],
    ] as const;
    for (const [body, status, path] of bad) {
      const res = await call(covel.baseUrl, keyA, 'POST', '/v1/worlds/generate', body);
      expect([path, res.status]).toEqual([path, status]);
      expect((res.json.issues as { path: string }[]).map((i) => i.path)).toContain(path);
    }
    const after = await countEvents(covel.engine.database.db);
    expect(after).toBe(before);
  }, 60_000);

  it('replay rebuilds the jobs’ progress view (and the worlds they made) identically from the log', async () => {
    const rows = async () => ({
      jobs: await covel.engine.database.db.selectFrom('world_generations').selectAll().orderBy('job_id').execute(),
      worlds: await covel.engine.database.db.selectFrom('worlds').selectAll().orderBy('world_id').execute(),
    });
    const live = await rows();
    expect(live.jobs.length).toBeGreaterThanOrEqual(2);
    expect((await rebuildInline({ db: covel.engine.database.db, projections: engineInlineProjections })).failures).toEqual([]);
    expect(await rows()).toEqual(live);
  }, 60_000);
});

describe('world creation: a first reply that is invalid gets one repair round', () => {
  let covel: EmbeddedEngine;
  let emulator: ProviderEmulator;
  let key = '';
  const worldCalls: ScriptedCall[] = [];
  /** Asked before each world creation call is answered (the test looks at the job's progress then). */
  let beforeWorldReply: (body: string) => Promise<void> = async () => undefined;
  const isWorldCall = (call: { system?: string; transcript: { role: string; content: string }[] }) => worldCreationReply(call) !== undefined;

  beforeAll(async () => {
    emulator = await new ProviderEmulator({
      // the first world-generation call gets a world whose lore opens a narrator-only part it never closes
      script: (scripted) => {
        if (!isWorldCall(scripted)) return undefined;
        worldCalls.push(scripted);
        if (worldCalls.length !== 1) return undefined;
        const world = JSON.parse(worldCreationReply(scripted)!.text) as Json;
        return { kind: 'text', text: JSON.stringify({ ...world, lore: `${String(world.lore)}\n${NARRATOR_ONLY_OPEN}\nThe fog is the warden's own breath.` }) };
      },
      beforeReply: async (request) => {
        if (request.raw.includes('world-brief') || request.raw.includes('world-lore')) await beforeWorldReply(request.raw);
      },
    }).start();
    covel = await startEmbedded({ COVEL_EMULATOR_URL: emulator.url });
    key = (await covel.engine.tenants.create('gen-repair')).apiKey;
  }, 60_000);
  afterAll(async () => {
    await covel?.stop();
    await emulator?.stop();
  });

  it('drafting → repairing 1/2 → done over SSE and long-poll; both calls recorded (the exact bytes sent) and derived again identically', async () => {
    let jobId = '';
    const seen: string[] = [];
    type Stream = Awaited<ReturnType<typeof openStreamAt>>;
    let opened!: (stream: Stream) => void;
    const streamOpen = new Promise<Stream>((resolve) => (opened = resolve));
    // each call is answered only once the job's progress says what it is doing
    beforeWorldReply = async (raw) => {
      const expected = raw.includes('world-lore') ? 'repairing 1/2' : 'drafting';
      for (let i = 0; i < 100; i++) {
        const { json } = await call(covel.baseUrl, key, 'GET', `/v1/worlds/generate/${jobId}`);
        if (json.progress === expected) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const { json } = await call(covel.baseUrl, key, 'GET', `/v1/worlds/generate/${jobId}`);
      seen.push(String(json.progress));
      // the SSE stream has sent it too (its poll interval is 500 ms)
      await (await streamOpen).until((e) => e.data.progress === expected);
    };
    const client = new PlayClient(covel.baseUrl, key);
    const requested = emulator.requests.length;
    const accepted = await call(covel.baseUrl, key, 'POST', '/v1/worlds/generate', { description: '雾中的关口 — a gate in the fog', locale: 'en' });
    jobId = String(accepted.json.jobId);
    const stream = await openStreamAt(client, `/v1/worlds/generate/${jobId}/events`);
    opened(stream);
    expect(stream.status).toBe(200);
    const done = await ended(covel.baseUrl, key, jobId);
    expect(done).toMatchObject({ status: 'done', round: 1, rounds: 2 });
    await stream.ended;
    expect(seen).toEqual(['drafting', 'repairing 1/2']);
    const progress = stream.events.map((e) => String(e.data.progress));
    expect(progress.filter((p, i) => p !== progress[i - 1])).toEqual([...(progress[0] === 'queued' ? ['queued'] : []), 'drafting', 'repairing 1/2', 'done']);
    expect(stream.events.every((e) => e.type === 'progress')).toBe(true);

    // exactly one repair round: a draft and a lore repair, each recorded before it was sent and answered after
    const events = await jobEvents(covel, jobId);
    expect(events.map((e) => e.type)).toEqual([
      'world-generation.requested@1',
      'world-generation.call-requested@1',
      'world-generation.call-responded@1',
      'world-generation.call-requested@1',
      'world-generation.call-responded@1',
      'world-generation.completed@1',
    ]);
    const calls = events.filter(
      (e): e is Extract<StoredEvent, { type: 'world-generation.call-requested@1' }> => e.type === 'world-generation.call-requested@1',
    );
    expect(calls.map((c) => [c.data.round, c.data.purpose, c.data.template])).toEqual([
      [0, 'draft', 'world-generation'],
      [1, 'lore-repair', 'lore-repair'],
    ]);
    expect(calls[1].data.problems).toEqual([{ path: 'lore', message: expect.stringContaining('is never closed') }]);
    // the bytes recorded are the bytes the provider got
    const sent = emulator.requests.slice(requested).map((r) => r.raw);
    expect(sent).toEqual(calls.map((c) => c.data.body));
    expect(worldCalls).toHaveLength(2);
    const audit = await call(covel.baseUrl, key, 'GET', `/v1/worlds/generate/${jobId}/audit`);
    expect(audit.json).toMatchObject({
      identical: true,
      calls: [
        { round: 0, purpose: 'draft', identical: true, firstMismatchAt: null },
        { round: 1, purpose: 'lore-repair', identical: true, firstMismatchAt: null },
      ],
    });
    const world = await call(covel.baseUrl, key, 'GET', `/v1/worlds/${done.worldId}`);
    const lore = String((world.json.document as Json).lore);
    expect(lore).toContain("The fog is the warden's own breath.");
    expect(narratorOnlyIssues(lore)).toEqual([]);
    expect(await worldsOfJob(covel, jobId)).toBe(1);
  }, 120_000);
});
