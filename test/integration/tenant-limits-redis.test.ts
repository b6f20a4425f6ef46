import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { tenantStreamId } from '../../libs/events';
import { freePort, type ManagedProcess, startApp, startStack, type Stack } from '../support/stack';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Issue 32 item 2 on PostgreSQL + Redis with two API processes: a tenant's request bucket lives in
 * Redis (one Lua script), so both processes draw on the same one; a change of limits through the
 * admin API of one process is recorded as an event and in force on the other within ~1 s, with no
 * restart; another tenant's bucket is its own.
 */
describe('tenant limits across two API processes (PostgreSQL + Redis)', () => {
  const adminKey = randomBytes(32).toString('hex');
  let stack: Stack;
  let second: ManagedProcess;
  let secondUrl: string;
  let db: Client;

  beforeAll(async () => {
    stack = await startStack({ workers: 0, env: { COVEL_ADMIN_API_KEY: adminKey } });
    const port = await freePort();
    second = await startApp('api 2', 'apps/api/main.ts', { ...stack.env, PORT: String(port) }, /listening on/);
    secondUrl = `http://127.0.0.1:${port}`;
    db = new Client({ connectionString: stack.adminUrl });
    await db.connect();
  }, 120_000);
  afterAll(async () => {
    await db?.end();
    await second?.stop();
    await stack?.stop();
  }, 60_000);

  const call = async (base: string, method: string, path: string, key: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : null) as Record<string, unknown> };
  };
  // a tenant and its first key, made through the operator's route
  const newTenant = async (name: string) => {
    const made = await call(stack.baseUrl, 'POST', '/admin/tenants', adminKey, { name });
    expect(made.status).toBe(201);
    const tenant = made.body.tenant as { id: string };
    return { id: tenant.id, apiKey: (made.body.key as { key: string }).key };
  };

  it('a change through one process is recorded and in force on the other within ~1 s; both draw on one bucket; another tenant is untouched', async () => {
    const alice = await newTenant('alice');
    const bob = await newTenant('bob');
    const put = await call(stack.baseUrl, 'PUT', `/admin/tenants/${alice.id}/limits`, adminKey, { requestsPerSecond: 0.2, burst: 6 });
    expect(put.status).toBe(200);
    const { rows } = await db.query<{ type: string; data: unknown }>(
      "select type, data from events where stream_id = $1 and type = 'tenant.limits-changed@1' order by stream_version",
      [tenantStreamId(alice.id)],
    );
    expect(rows).toEqual([{ type: 'tenant.limits-changed@1', data: { tenantId: alice.id, limits: { requestsPerSecond: 0.2, burst: 6 }, by: 'operator' } }]);
    // the other process reads it at once, and is in force within its cache time
    expect((await call(secondUrl, 'GET', '/v1/limits', alice.apiKey)).body).toMatchObject({ limits: { requestsPerSecond: 0.2, burst: 6 } });
    await sleep(1_000);
    const statuses: number[] = [];
    const remaining: (string | null)[] = [];
    const current: (string | null)[] = [];
    const policies = new Set<string | null>();
    for (let i = 0; i < 8; i++) {
      const res = await call(i % 2 === 0 ? stack.baseUrl : secondUrl, 'GET', '/v1/sessions', alice.apiKey);
      statuses.push(res.status);
      remaining.push(res.headers.get('ratelimit-remaining'));
      current.push(/^"default";r=(\d+);t=\d+$/.exec(res.headers.get('ratelimit') ?? '')?.[1] ?? null);
      policies.add(res.headers.get('ratelimit-policy'));
      if (res.status === 429) {
        expect(res.body.code).toBe('RATE_LIMITED');
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      }
    }
    // one bucket of 6 for both processes (the GET /v1/limits above took the first token; two buckets would have let all 8 through)
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    expect(remaining.slice(0, 5)).toEqual(['4', '3', '2', '1', '0']);
    // the refused ones carry the headers too, from either process (Retry-After checked above)
    expect(remaining.slice(5)).toEqual(['0', '0', '0']);
    expect(current.slice(5)).toEqual(['0', '0', '0']);
    // the current draft's fields say the same (6 tokens, 30 s to fill at 0.2/s), from either process
    expect(current.slice(0, 5)).toEqual(['4', '3', '2', '1', '0']);
    expect([...policies]).toEqual(['"default";q=6;w=30']);
    // bob has his own (the defaults), on both processes
    for (const base of [stack.baseUrl, secondUrl]) {
      const res = await call(base, 'GET', '/v1/sessions', bob.apiKey);
      expect([res.status, res.headers.get('ratelimit-limit')]).toEqual([200, '5000']);
    }
    // raised through the second process: the first lets alice through within ~1 s, no restart
    expect((await call(secondUrl, 'PUT', `/admin/tenants/${alice.id}/limits`, adminKey, { requestsPerSecond: 100, burst: 100 })).status).toBe(200);
    const raisedAt = Date.now();
    let status = 0;
    while (Date.now() - raisedAt < 3_000) {
      status = (await call(stack.baseUrl, 'GET', '/v1/sessions', alice.apiKey)).status;
      if (status === 200) break;
      await sleep(50);
    }
    const tookMs = Date.now() - raisedAt;
    console.log(`raised limit in force on the other API process after ${tookMs} ms`);
    expect(status).toBe(200);
    expect(tookMs).toBeLessThan(1_500);
    const { rows: changes } = await db.query("select 1 from events where stream_id = $1 and type = 'tenant.limits-changed@1'", [tenantStreamId(alice.id)]);
    expect(changes).toHaveLength(2);
  }, 60_000);
});
