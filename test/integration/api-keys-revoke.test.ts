import { randomBytes } from 'node:crypto';
import { freePort, type ManagedProcess, startApp, startStack, type Stack } from '../support/stack';

type Json = Record<string, unknown>;

/**
 * Issue 32: a key revoked on one API process is refused by another within 1 s (each process
 * remembers a found key for TENANT_CACHE_MS = 500 ms). Two API processes on one PostgreSQL, the
 * app role apart from the owner (the new tables' grants), no worker needed.
 */
describe('API key revocation across two API processes (PostgreSQL)', () => {
  const adminKey = randomBytes(32).toString('hex');
  let stack: Stack;
  let second: ManagedProcess;
  let secondUrl: string;

  beforeAll(async () => {
    stack = await startStack({ workers: 0, separateRoles: true, env: { COVEL_ADMIN_API_KEY: adminKey } });
    const port = await freePort();
    secondUrl = `http://127.0.0.1:${port}`;
    second = await startApp('api 2', 'apps/api/main.ts', { ...stack.env, PORT: String(port) }, /listening on/);
  }, 120_000);
  afterAll(async () => {
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
    return { status: res.status, body: (text ? JSON.parse(text) : null) as Json };
  };

  /** Uses the key on the second process until the revoke, then measures how long it still answers 200. */
  async function refusedWithin(key: string, revoke: () => Promise<{ status: number }>): Promise<number> {
    for (let i = 0; i < 5; i++) expect((await call(secondUrl, 'GET', '/v1/sessions', key)).status).toBe(200); // remembered there
    const revoked = await revoke();
    expect(revoked.status).toBe(200);
    const at = Date.now();
    for (;;) {
      const { status } = await call(secondUrl, 'GET', '/v1/sessions', key);
      const elapsed = Date.now() - at;
      if (status === 401) return elapsed;
      expect(status).toBe(200);
      if (elapsed > 3_000) return elapsed;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it("a key revoked through one process's /v1/keys is a 401 on the other within 1 s", async () => {
    const made = await call(stack.baseUrl, 'POST', '/v1/keys', stack.apiKey, { name: 'short-lived', scopes: ['read'] });
    expect(made.status).toBe(201);
    const { id, key } = made.body as { id: string; key: string };
    const elapsed = await refusedWithin(key, () => call(stack.baseUrl, 'DELETE', `/v1/keys/${id}`, stack.apiKey));
    expect(elapsed).toBeLessThan(1_000);
    // the bootstrap key (migrated or made at start-up) has every scope and still works on both
    for (const base of [stack.baseUrl, secondUrl]) expect((await call(base, 'GET', '/v1/keys', stack.apiKey)).status).toBe(200);
  }, 60_000);

  it("a tenant made on one process by the operator; its key revoked by the operator on the other; the processes' output holds no key", async () => {
    const made = await call(secondUrl, 'POST', '/admin/tenants', adminKey, { name: 'ops' });
    expect(made.status).toBe(201);
    const tenant = made.body.tenant as { id: string };
    const first = made.body.key as { id: string; key: string };
    expect((await call(stack.baseUrl, 'POST', '/v1/sessions', first.key, {})).status).toBe(201);
    const elapsed = await refusedWithin(first.key, () => call(stack.baseUrl, 'DELETE', `/admin/tenants/${tenant.id}/keys/${first.id}`, adminKey));
    expect(elapsed).toBeLessThan(1_000);
    for (const out of [stack.api.output(), second.output()]) {
      expect(out.length).toBeGreaterThan(0);
      expect(out.includes(first.key)).toBe(false);
      expect(out.includes(stack.apiKey)).toBe(false);
    }
  }, 60_000);
});
