import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');

type Quarantined = { id: string; shard: number; globalPosition: number; eventType: string; errorCode: string; attempts: number; quarantinedAt: string };
type Health = { status: string; projections: { name: string; state: string; quarantined: Quarantined[] }[] };

/**
 * Issue 31 item 3 through what operators and players use (the embedded default: PGlite, the
 * in-process queue, the emulator; quarantine after 2 attempts): a poisoned event is quarantined,
 * `/health` is degraded until the operator acknowledges it (admin key), `/metrics` counts it, the
 * session's view says it is incomplete (503) while another tenant's views answer, and
 * `npm run replay` reports it.
 */
describe('a quarantined event: health, admin routes, metrics, views, replay (embedded)', () => {
  const adminKey = randomBytes(32).toString('hex');
  let covel: EmbeddedEngine;
  let stopped = false;
  beforeAll(async () => {
    covel = await startEmbedded({ COVEL_PROJECTION_QUARANTINE_AFTER: '2', COVEL_ADMIN_API_KEY: adminKey }, undefined, { onDisk: true });
  });
  afterAll(async () => {
    if (!stopped) await covel?.stop();
    else rmSync(covel.dataDir, { recursive: true, force: true });
  });

  const get = async (path: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${covel.baseUrl}${path}`, { headers });
    return { status: res.status, text: await res.text(), headers: res.headers };
  };
  const health = async () => {
    const res = await get('/health');
    return { status: res.status, text: res.text, body: JSON.parse(res.text) as Health };
  };
  const asAdmin = { authorization: `Bearer ${adminKey}` };
  const metric = async (line: RegExp) => Number(line.exec((await get('/metrics', asAdmin)).text)?.[1] ?? NaN);

  /** An llm.calling@1 whose request body is not JSON: the event schema takes it, trace_events applies it, prefix_reports cannot. */
  async function poison(sessionId: string): Promise<{ position: number; tenantId: string }> {
    const { store } = covel.engine;
    const tenantId = (await store.readStream(sessionId, 0, 1))[0].tenantId;
    const callId = randomUUID();
    const result = await store.append({
      tenantId,
      streamId: sessionId,
      expectedVersion: await store.streamVersion(sessionId),
      events: [
        {
          type: 'llm.calling@1',
          data: {
            executionId: 'hand-made',
            turnId: 'hand-made',
            attempt: 1,
            callId,
            pluginId: 'narrator',
            runtimeId: 'story',
            provider: 'openai-chat',
            model: 'm',
            body: 'no-such-json-text',
          },
        },
      ],
    });
    return { position: result.lastPosition, tenantId };
  }

  it('quarantines it after 2 attempts: the shard goes on, /health degraded until acknowledged, the view says so, tenants see only theirs, replay reports it', async () => {
    const alice = await covel.newTenant('alice');
    const bob = await covel.newTenant('bob');
    const broken = await alice.createSession();
    const fine = await bob.createSession();
    await alice.waitFor((await alice.submit(broken.id, 'walk to the river')).executionId, 30_000);
    await bob.waitFor((await bob.submit(fine.id, 'light the lantern')).executionId, 30_000);
    expect((await health()).body.status).toBe('ok');
    expect(await metric(/^covel_projection_quarantined_events_total\{projection="prefix_reports"\} (\d+)$/m)).toBe(0);

    // given a poisoned event in alice's session; when the projector has failed it twice
    const bad = await poison(broken.id);
    let h = await health();
    for (let i = 0; i < 300 && !h.body.projections.some((p) => p.quarantined.length > 0); i++) {
      await new Promise((r) => setTimeout(r, 100));
      h = await health();
    }
    // then /health is degraded and names the record, without tenant, session or error text
    expect(h.status).toBe(503);
    expect(h.body.status).toBe('degraded');
    const prefix = h.body.projections.find((p) => p.name === 'prefix_reports')!;
    expect(prefix).toMatchObject({
      state: 'running',
      quarantinedOpen: 1,
      quarantined: [{ id: expect.any(String), globalPosition: bad.position, eventType: 'llm.calling@1', errorCode: 'SyntaxError', attempts: 2 }],
    });
    const id = prefix.quarantined[0].id;
    for (const secret of [broken.id, bad.tenantId, 'no-such-json-text', 'is not valid JSON']) expect(h.text).not.toContain(secret);
    expect(h.body.projections.find((p) => p.name === 'trace_events')).toMatchObject({ state: 'running', quarantined: [], quarantinedOpen: 0 });

    // the counter and the open gauge on /metrics
    expect(await metric(/^covel_projection_quarantined_events_total\{projection="prefix_reports"\} (\d+)$/m)).toBe(1);
    expect(await metric(/^covel_projection_quarantined_unacknowledged\{projection="prefix_reports"\} (\d+)$/m)).toBe(1);

    // the shard went on: alice's next turn is in prefix_reports
    const next = await alice.submit(broken.id, 'cross the river');
    await alice.waitFor(next.executionId, 30_000);
    await covel.engine.projector.drain();
    const reported = await covel.engine.database.db.selectFrom('prefix_reports').select('turn_id').where('session_id', '=', broken.id).execute();
    expect(reported.map((r) => r.turn_id)).toContain(next.turnId);

    // the view that depends on it says so (503, naming the projection); the other view and bob's answer
    const view = await get(`/v1/sessions/${broken.id}/prefix-report`, alice.authHeaders());
    expect(view.status).toBe(503);
    expect(JSON.parse(view.text)).toMatchObject({
      statusCode: 503,
      code: 'PROJECTION_QUARANTINED',
      message: expect.stringContaining('prefix_reports'),
      details: { projection: 'prefix_reports', quarantined: [{ globalPosition: bad.position, eventType: 'llm.calling@1', errorCode: 'SyntaxError' }] },
    });
    expect(view.text).not.toContain('no-such-json-text');
    expect(Number(view.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await get(`/v1/sessions/${broken.id}/llm-calls`, alice.authHeaders())).status).toBe(200);
    // the session list: the quarantined session's cost is null and says why (one tenant's sessions only); bob's has its figure
    type Costed = { sessionId: string; estCostUsd: number | null; costQuarantined: boolean };
    const alices = await alice.request<Costed[]>('GET', '/v1/sessions');
    expect(alices.find((s) => s.sessionId === broken.id)).toMatchObject({ estCostUsd: null, costQuarantined: true });
    expect(await alice.request<Costed>('GET', `/v1/sessions/${broken.id}`)).toMatchObject({ estCostUsd: null, costQuarantined: true });
    const bobsSession = (await bob.request<Costed[]>('GET', '/v1/sessions')).find((s) => s.sessionId === fine.id);
    expect(bobsSession).toMatchObject({ costQuarantined: false, estCostUsd: expect.any(Number) });
    // tenant-scoped: the record's stream id asked under another tenant is not quarantined for it
    expect(
      await covel.engine.projector.quarantine.streamsWithUnresolved({ tenantId: bad.tenantId, projection: 'prefix_reports', streamIds: [broken.id, fine.id] }),
    ).toEqual(new Set([broken.id]));
    expect(
      await covel.engine.projector.quarantine.streamsWithUnresolved({ tenantId: 'another-tenant', projection: 'prefix_reports', streamIds: [broken.id] }),
    ).toEqual(new Set());
    const bobs = await bob.request<{ callId: string }[]>('GET', `/v1/sessions/${fine.id}/prefix-report`);
    expect(bobs.length).toBeGreaterThan(0);
    // bob never sees alice's record, nor her session
    expect((await get(`/v1/sessions/${broken.id}/prefix-report`, bob.authHeaders())).status).toBe(404);

    // the operator's list: behind the admin key only (a tenant's key is refused), every tenant's records with the error
    expect((await get('/admin/quarantine')).status).toBe(401);
    expect((await get('/admin/quarantine', alice.authHeaders())).status).toBe(401);
    expect((await get('/admin/quarantine?state=nope', asAdmin)).status).toBe(400);
    const listed = JSON.parse((await get('/admin/quarantine', asAdmin)).text) as { quarantined: Record<string, unknown>[] };
    expect(listed.quarantined).toEqual([
      expect.objectContaining({
        id,
        projection: 'prefix_reports',
        streamId: broken.id,
        tenantId: bad.tenantId,
        error: expect.stringContaining('SyntaxError'),
        acknowledgedAt: null,
      }),
    ]);

    // acknowledged: /health is ok again, the open gauge 0, the counter stays; the view still says it is incomplete
    const ack = (headers: Record<string, string>, which = id) => fetch(`${covel.baseUrl}/admin/quarantine/${which}/ack`, { method: 'POST', headers });
    expect((await ack(alice.authHeaders())).status).toBe(401);
    const missing = await ack(asAdmin, '424242');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 'QUARANTINE_NOT_FOUND', message: 'no quarantined event 424242' });
    // an id that is not a record id (emoji, too long): 400 naming it, nothing quoted or cut
    for (const bad of [encodeURIComponent('😀'.repeat(30)), '1'.repeat(19), '0', 'abc']) {
      const refused = await ack(asAdmin, bad);
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ statusCode: 400, code: 'INVALID_QUARANTINE_ID', issues: [{ path: 'id' }] });
    }
    const acked = await ack(asAdmin);
    expect(acked.status).toBe(200);
    expect(await acked.json()).toMatchObject({ id, acknowledgedBy: 'admin-api', acknowledgedAt: expect.any(String) });
    const after = await health();
    expect(after.status).toBe(200);
    expect(after.body.status).toBe('ok');
    expect(await metric(/^covel_projection_quarantined_unacknowledged\{projection="prefix_reports"\} (\d+)$/m)).toBe(0);
    expect(await metric(/^covel_projection_quarantined_events_total\{projection="prefix_reports"\} (\d+)$/m)).toBe(1);
    expect((await get(`/v1/sessions/${broken.id}/prefix-report`, alice.authHeaders())).status).toBe(503);

    // npm run replay (the service stopped: the embedded data directory is its alone) reports it, exit code 1
    await covel.stop({ keepData: true });
    stopped = true;
    const env = { ...process.env, COVEL_DATA_DIR: covel.dataDir, DATABASE_URL: '', REDIS_URL: '', COVEL_PROJECTION_QUARANTINE_AFTER: '2' };
    const replay = await run('npm', ['run', 'replay', '--', '--projection', 'prefix_reports'], { cwd: ROOT, env }).then(
      () => ({ code: 0, stdout: '', stderr: '' }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    expect(replay.code).toBe(1);
    expect(replay.stderr).toContain(
      `quarantined #${id}: projection prefix_reports skips global position ${bad.position} (llm.calling@1) of stream ${broken.id} (tenant ${bad.tenantId}), 2 attempt(s), acknowledged`,
    );
    expect(replay.stderr).toMatch(/1 event\(s\) not applied/);
    // and the operator's script lists it
    const { stdout } = await run('npm', ['run', 'quarantine'], { cwd: ROOT, env });
    expect(stdout).toContain(
      `#${id} prefix_reports shard ${prefix.quarantined[0].shard}: global position ${bad.position} (llm.calling@1) of stream ${broken.id}`,
    );
    expect(stdout).toMatch(/1 quarantined event\(s\) unresolved, 0 not acknowledged/);
  }, 180_000);
});
