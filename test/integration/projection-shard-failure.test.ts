import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { type Stack, startStack } from '../support/stack';

type AsyncHealth = {
  kind: 'async';
  name: string;
  state: string;
  lag: number;
  failing: number;
  failures: { shard: number; position: number; globalPosition: number; eventType: string; errorCode: string; attempts: number }[];
  quarantined: { id: string; shard: number; globalPosition: number; eventType: string; errorCode: string; attempts: number }[];
};
type Health = { status: string; projections: ({ kind: 'turn-read'; name: string; state: string } | AsyncHealth)[] };

/**
 * Real PostgreSQL (as the app role) + Redis, an API and a worker: an llm.calling event the prefix_reports projection
 * cannot apply (its request body is not JSON; written into the log by hand, so it passes the
 * schema and every other projection applies it) stops that projection's shard of the session
 * alone. /health
 * shows the shard (no session, tenant or error text), the other shards go on, and turns of that
 * session and of others still commit. After 3 failed attempts (COVEL_PROJECTION_QUARANTINE_AFTER) the
 * event is quarantined: the shard goes on after it, /health stays degraded until the operator
 * acknowledges it, and the session's prefix report answers 503 PROJECTION_QUARANTINED.
 */
describe('an async projection shard that cannot apply an event (PostgreSQL + BullMQ)', () => {
  let stack: Stack;
  let admin: Client;
  const adminKey = randomBytes(32).toString('hex');
  beforeAll(async () => {
    stack = await startStack({ workers: 1, separateRoles: true, env: { COVEL_PROJECTION_QUARANTINE_AFTER: '3', COVEL_ADMIN_API_KEY: adminKey } });
    admin = new Client({ connectionString: stack.adminUrl });
    await admin.connect();
  }, 120_000);
  afterAll(async () => {
    await admin?.end();
    await stack?.stop();
  });

  const partitionOf = async (session: string) => Number((await admin.query<{ p: number }>('select (hashtext($1) & 15)::int as p', [session])).rows[0].p);
  const health = async () => {
    const res = await fetch(`${stack.baseUrl}/health`);
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text) as Health };
  };
  const asyncOf = (h: Health, name: string) => h.projections.find((p): p is AsyncHealth => p.kind === 'async' && p.name === name)!;

  it('stops that shard alone, shows it on /health, and turns still commit', async () => {
    const { client } = stack;
    const broken = await client.createSession();
    await client.waitFor((await client.submit(broken.id, 'walk to the river')).executionId, 60_000);
    const shard = await partitionOf(broken.id);
    // sessions in other shards, and (when one turns up) one in the same shard
    const others: { id: string; shard: number }[] = [];
    for (let i = 0; i < 12 && (others.length < 3 || !others.some((o) => o.shard === shard)); i++) {
      const { id } = await client.createSession();
      others.push({ id, shard: await partitionOf(id) });
    }
    const elsewhere = others.filter((o) => o.shard !== shard);
    expect(elsewhere.length).toBeGreaterThan(0);

    // an llm.calling@1 whose body is not JSON, appended to the broken session by hand
    const { rows } = await admin.query<{ tenant_id: string; v: number }>(
      'select tenant_id, max(stream_version)::int as v from events where stream_id = $1 group by tenant_id',
      [broken.id],
    );
    const [{ tenant_id: tenantId, v }] = rows;
    const inserted = await admin.query<{ global_position: string }>(
      `insert into events (tenant_id, stream_id, stream_version, type, data, metadata) values ($1, $2, $3, 'llm.calling@1', $4, '{}') returning global_position`,
      [
        tenantId,
        broken.id,
        v + 1,
        JSON.stringify({
          executionId: 'hand-made',
          turnId: 'hand-made',
          attempt: 1,
          callId: 'hand-made-call',
          pluginId: 'narrator',
          runtimeId: 'story',
          provider: 'openai-chat',
          model: 'm',
          body: 'no-such-json-text',
        }),
      ],
    );
    const badAt = Number(inserted.rows[0].global_position);

    // the shard stops: /health is degraded and says where, without the session, tenant or error text
    let h = await health();
    for (let i = 0; i < 200 && asyncOf(h.body, 'prefix_reports').failing === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      h = await health();
    }
    expect(h.status).toBe(503);
    expect(h.body.status).toBe('degraded');
    expect(asyncOf(h.body, 'prefix_reports')).toMatchObject({
      state: 'failing',
      failing: 1,
      failures: [{ shard, globalPosition: badAt, eventType: 'llm.calling@1', errorCode: 'SyntaxError', attempts: expect.any(Number) }],
    });
    expect(asyncOf(h.body, 'trace_events')).toMatchObject({ state: 'running', failing: 0 });
    for (const secret of [broken.id, tenantId, 'no-such-json-text', 'is not valid JSON']) expect(h.text).not.toContain(secret);
    expect(h.body.projections.filter((p) => p.kind === 'turn-read').every((p) => p.state === 'running')).toBe(true);

    // turns still commit: the broken session's and the others'
    await client.waitFor((await client.submit(broken.id, 'cross the river')).executionId, 60_000);
    for (const o of others) await client.waitFor((await client.submit(o.id, `light lantern ${o.shard}`)).executionId, 60_000);
    expect((await client.messages(broken.id)).length).toBe(4);

    // other shards go on: their llm calls and reports are there
    for (const o of elsewhere) {
      const calls = await client.request<{ callId: string }[]>('GET', `/v1/sessions/${o.id}/llm-calls`);
      expect(calls.length).toBeGreaterThan(0);
      const report = await client.request<{ callId: string }[]>('GET', `/v1/sessions/${o.id}/prefix-report`);
      expect(report.map((r) => r.callId)).toEqual(calls.map((c) => c.callId));
    }
    // the broken session: trace_events applied the hand-made call (only prefix_reports cannot)
    const traced = async () => (await admin.query<{ n: number }>(`select count(*)::int as n from trace_events where call_id = 'hand-made-call'`)).rows[0].n;
    for (let i = 0; i < 100 && (await traced()) === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await traced()).toBe(1);

    // the third attempt quarantines it: the shard goes on, /health stays degraded and names the record
    h = await health();
    for (let i = 0; i < 300 && asyncOf(h.body, 'prefix_reports').quarantined.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      h = await health();
    }
    expect(h.status).toBe(503);
    expect(asyncOf(h.body, 'prefix_reports')).toMatchObject({
      state: 'running',
      failing: 0,
      quarantined: [{ shard, globalPosition: badAt, eventType: 'llm.calling@1', errorCode: 'SyntaxError', attempts: 3 }],
    });
    for (const secret of [broken.id, tenantId, 'no-such-json-text', 'is not valid JSON']) expect(h.text).not.toContain(secret);
    const id = asyncOf(h.body, 'prefix_reports').quarantined[0].id;
    const record = await admin.query<{ stream_id: string; tenant_id: string; error: string }>('select * from projection_quarantine where id = $1', [id]);
    expect(record.rows).toEqual([expect.objectContaining({ stream_id: broken.id, tenant_id: tenantId, error: expect.stringContaining('SyntaxError') })]);
    // the broken session's later turn is applied after the skipped event
    const laterTurn = (
      await admin.query<{ t: string }>(
        `select data->>'turnId' as t from events where stream_id = $1 and type = 'turn.committed@1' order by global_position desc limit 1`,
        [broken.id],
      )
    ).rows[0].t;
    const reportedLater = async () =>
      (await admin.query<{ n: number }>('select count(*)::int as n from prefix_reports where session_id = $1 and turn_id = $2', [broken.id, laterTurn])).rows[0]
        .n;
    for (let i = 0; i < 100 && (await reportedLater()) === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await reportedLater()).toBeGreaterThan(0);
    // its prefix report says it is incomplete instead of answering what it has
    const view = await fetch(`${stack.baseUrl}/v1/sessions/${broken.id}/prefix-report`, { headers: client.authHeaders() });
    expect(view.status).toBe(503);
    expect(await view.json()).toMatchObject({ code: 'PROJECTION_QUARANTINED', details: { projection: 'prefix_reports' } });

    // the operator acknowledges it (admin key): /health is ok again
    const listed = (await (await fetch(`${stack.baseUrl}/admin/quarantine`, { headers: { authorization: `Bearer ${adminKey}` } })).json()) as {
      quarantined: { id: string; streamId: string }[];
    };
    expect(listed.quarantined.map((q) => [q.id, q.streamId])).toEqual([[id, broken.id]]);
    const ack = await fetch(`${stack.baseUrl}/admin/quarantine/${id}/ack`, { method: 'POST', headers: { authorization: `Bearer ${adminKey}` } });
    expect(ack.status).toBe(200);
    const healed = await health();
    expect([healed.status, healed.body.status]).toEqual([200, 'ok']);

    // logged once by the worker, naming projection, shard, position, stream and tenant
    const lines = stack.workers[0]
      .output()
      .split('\n')
      .filter((l) => l.includes(`projection prefix_reports shard ${shard} stopped at global position ${badAt}`));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`of stream ${broken.id} (tenant ${tenantId})`);
    const skipped = stack.workers[0]
      .output()
      .split('\n')
      .filter((l) => l.includes(`projection prefix_reports shard ${shard} skipped the event at global position ${badAt}`));
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toContain(`quarantined as #${id}`);
  }, 240_000);
});
