import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { ensureBootstrapTenant } from '../../apps/api/bootstrap-tenant';
import { ensureDevTenant } from '../../apps/dev-tenant';
import { PlayClient } from '../../apps/play/play-client';
import { createLogger } from '../../libs/engine';
import { hmacApiKey, loadKeyPepper, sha256ApiKey } from '../../libs/events';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';

type Json = Record<string, unknown>;

/**
 * API keys with scopes (issue 32), on the embedded default: `POST/GET/DELETE /v1/keys` for a key with
 * the `admin` scope, the scope rule on every `/v1` route (403 `INSUFFICIENT_SCOPE`), the operator's
 * `/admin/tenants…`, the audit trail in `tenant:<tenantId>`, tenant isolation of each of them, and
 * no key or hash anywhere but its own row (log, every other table, the process's log lines).
 */
describe('API keys and scopes (embedded)', () => {
  const adminKey = randomBytes(32).toString('hex');
  const bootstrapKey = randomBytes(32).toString('hex');
  const logLines: string[] = [];
  let covel: EmbeddedEngine;
  let keyA: string;
  let tenantA: string;
  let keyB: string;
  let tenantB: string;

  beforeAll(async () => {
    // every line the engine logs, at debug, with player text: the strictest place a key could leak to
    const logger = createLogger({ format: 'json', level: 'debug', playerText: true, destination: { write: (line: string) => void logLines.push(line) } });
    covel = await startEmbedded({ COVEL_ADMIN_API_KEY: adminKey, COVEL_BOOTSTRAP_API_KEY: bootstrapKey }, undefined, { logger });
    const a = await covel.engine.tenants.create('a');
    [keyA, tenantA] = [a.apiKey, a.tenant.id];
    const b = await covel.engine.tenants.create('b');
    [keyB, tenantB] = [b.apiKey, b.tenant.id];
  }, 60_000);
  afterAll(() => covel?.stop(), 30_000);

  const call = async (method: string, path: string, key: string | null, body?: unknown) => {
    const res = await fetch(`${covel.baseUrl}${path}`, {
      method,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : null) as Json };
  };
  const makeKey = async (key: string, name: string, scopes: string[]) => {
    const res = await call('POST', '/v1/keys', key, { name, scopes });
    expect(res.status).toBe(201);
    return res.body as { id: string; key: string; name: string; scopes: string[] };
  };
  const tenantEvents = async (tenantId: string) =>
    (await covel.engine.store.readStream(`tenant:${tenantId}`)).map((e) => ({ type: e.type, data: e.data as Json }));

  it('POST /v1/keys answers the key once (201) with its id, name, scopes and createdAt; GET lists keys without it; the key works', async () => {
    const created = await call('POST', '/v1/keys', keyA, { name: 'reader', scopes: ['read'] });
    expect(created).toEqual({
      status: 201,
      body: {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        key: expect.stringMatching(/^cvl_[A-Za-z0-9_-]{43}$/),
        name: 'reader',
        scopes: ['read'],
        prefix: (created.body.key as string).slice(0, 8),
        createdAt: expect.any(String),
        lastUsedAt: null,
        revokedAt: null,
      },
    });
    const listed = await call('GET', '/v1/keys', keyA);
    expect(listed.status).toBe(200);
    const keys = listed.body.keys as Json[];
    expect(keys.map((k) => k.name)).toEqual(['first key', 'reader']);
    expect(Object.keys(keys[1]).sort()).toEqual(['createdAt', 'id', 'lastUsedAt', 'name', 'prefix', 'revokedAt', 'scopes']);
    expect(JSON.stringify(listed.body)).not.toContain(created.body.key as string);
    expect((await call('GET', '/v1/sessions', created.body.key as string)).status).toBe(200);
  });

  it('scopes: GET needs read, other methods play, /v1/keys admin: 403 INSUFFICIENT_SCOPE naming the scope, before the body is read', async () => {
    const reader = await makeKey(keyA, 'read only', ['read']);
    const player = await makeKey(keyA, 'play only', ['play']);
    const session = await new PlayClient(covel.baseUrl, keyA).createSession({});
    // a read key cannot post inputs
    const post = await call('POST', `/v1/sessions/${session.id}/inputs`, reader.key, { text: 'hello' });
    expect(post).toEqual({
      status: 403,
      body: { statusCode: 403, error: 'Forbidden', code: 'INSUFFICIENT_SCOPE', message: expect.stringContaining('play'), details: { requiredScope: 'play' } },
    });
    expect((await call('POST', '/v1/sessions', reader.key, {})).body.details).toEqual({ requiredScope: 'play' });
    expect((await call('GET', `/v1/sessions/${session.id}/messages`, reader.key)).status).toBe(200);
    // a play key cannot read
    expect((await call('GET', `/v1/sessions/${session.id}/messages`, player.key)).body.details).toEqual({ requiredScope: 'read' });
    expect((await call('POST', `/v1/sessions/${session.id}/inputs`, player.key, { text: 'hello' })).status).toBe(202);
    // keys need admin, whatever the method
    for (const [method, path] of [
      ['GET', '/v1/keys'],
      ['POST', '/v1/keys'],
      ['DELETE', `/v1/keys/${reader.id}`],
      // the router matches paths whatever their letter case: so does the scope rule
      ['GET', '/v1/KEYS'],
      ['POST', '/v1/Keys'],
      ['DELETE', `/V1/keys/${reader.id}`],
    ])
      for (const key of [reader.key, player.key])
        expect((await call(method, path, key, method === 'POST' ? {} : undefined)).body.details).toEqual({ requiredScope: 'admin' });
    // an unknown route under /v1 is still a 404 for a key with the scope, a 403 without it (scope first: nothing is read)
    expect((await call('GET', '/v1/nothing-here', reader.key)).status).toBe(404);
    expect((await call('GET', '/v1/nothing-here', player.key)).status).toBe(403);
  });

  it("the embedded default's dev key and the bootstrap key have every scope (and are made once)", async () => {
    const dev = await ensureDevTenant(covel.engine);
    expect(await ensureDevTenant(covel.engine)).toBe(dev);
    await ensureBootstrapTenant(covel.engine);
    await ensureBootstrapTenant(covel.engine);
    for (const key of [dev, bootstrapKey]) expect((await covel.engine.tenants.authenticate(key))?.key.scopes).toEqual(['play', 'read', 'admin']);
    expect((await covel.engine.tenants.list()).filter((t) => t.name === 'bootstrap')).toHaveLength(1);
  });

  it('a revoked bootstrap key (rotated out) is not made again: the start goes on with a warning naming neither key nor hash', async () => {
    const tenants = covel.engine.tenants;
    const caller = (await tenants.authenticate(bootstrapKey))!;
    await tenants.revokeKey({ tenantId: caller.tenant.id, keyId: caller.key.id, by: 'operator', keepLastAdmin: false });
    expect(await tenants.keyStatus(bootstrapKey)).toBe('revoked');
    const before = logLines.length;
    await ensureBootstrapTenant(covel.engine);
    expect(logLines.slice(before).join('')).toContain('COVEL_BOOTSTRAP_API_KEY is a revoked key');
    expect(await tenants.authenticate(bootstrapKey)).toBeNull();
    expect((await tenants.list()).filter((t) => t.name === 'bootstrap')).toHaveLength(1);
    // a stored key made again is a 409 API_KEY_EXISTS without the database's detail (which names the hash)
    const error = (await tenants.create('again', bootstrapKey).catch((e: unknown) => e)) as Error & { code: string; detail?: unknown };
    expect([error.code, error.message, error.cause, error.detail]).toEqual([
      'API_KEY_EXISTS',
      'this api key (or tenant) is already stored',
      undefined,
      undefined,
    ]);
    const pepper = await loadKeyPepper(covel.engine.database.db, null);
    for (const secret of [bootstrapKey, hmacApiKey(bootstrapKey, pepper)]) expect(logLines.join('').includes(secret)).toBe(false);
  });

  it('bad input is a 400 naming the field', async () => {
    const bad = async (body: unknown) => ((await call('POST', '/v1/keys', keyA, body)).body.issues as { path: string }[]).map((i) => i.path);
    expect(await bad({ scopes: ['read'] })).toEqual(['name']);
    expect(await bad({ name: 'x', scopes: ['read', 'root'] })).toEqual(['scopes.1']);
    expect(await bad({ name: 'x', scopes: [] })).toEqual(['scopes']);
    expect(await bad({ name: 'x', scopes: ['read', 'read'] })).toEqual(['scopes']);
    expect(await bad({ name: ' ', scopes: ['read'] })).toEqual(['name']);
    expect(await bad({ name: 'x', scopes: ['read'], key: 'cvl_mine' })).toEqual(['(body)']);
    expect((await call('DELETE', '/v1/keys/not-a-uuid', keyA)).body.code).toBe('API_KEY_NOT_FOUND');
  });

  it('DELETE /v1/keys/:id revokes: the key is a 401 at once; recorded as api-key.created/revoked by the key that did it; never the key or hash', async () => {
    const before = await call('GET', '/v1/keys', keyA);
    const adminId = (before.body.keys as Json[])[0].id as string;
    const doomed = await makeKey(keyA, 'doomed', ['play', 'read']);
    expect((await call('GET', '/v1/sessions', doomed.key)).status).toBe(200);
    const revoked = await call('DELETE', `/v1/keys/${doomed.id}`, keyA);
    expect(revoked).toMatchObject({ status: 200, body: { id: doomed.id, name: 'doomed', revokedAt: expect.any(String) } });
    expect(await call('GET', '/v1/sessions', doomed.key)).toMatchObject({ status: 401, body: { code: 'UNKNOWN_API_KEY' } });
    // again: nothing changes, no second event
    expect((await call('DELETE', `/v1/keys/${doomed.id}`, keyA)).body.revokedAt).toBe(revoked.body.revokedAt);
    const events = await tenantEvents(tenantA);
    const ofDoomed = events.filter((e) => e.data.keyId === doomed.id);
    expect(ofDoomed).toEqual([
      { type: 'api-key.created@1', data: { keyId: doomed.id, name: 'doomed', scopes: ['play', 'read'], by: `key:${adminId}` } },
      { type: 'api-key.revoked@1', data: { keyId: doomed.id, name: 'doomed', scopes: ['play', 'read'], by: `key:${adminId}` } },
    ]);
    expect(events[0]).toEqual({ type: 'tenant.created@1', data: { tenantId: tenantA, name: 'a', by: 'operator' } });
  });

  it("a tenant's key cannot revoke the tenant's last admin key (409 LAST_ADMIN_KEY); with a second admin key it can", async () => {
    const c = await covel.engine.tenants.create('c');
    const self = await call('DELETE', `/v1/keys/${c.key.id}`, c.apiKey);
    expect(self).toMatchObject({ status: 409, body: { code: 'LAST_ADMIN_KEY' } });
    const second = await makeKey(c.apiKey, 'second admin', ['admin']);
    expect((await call('DELETE', `/v1/keys/${c.key.id}`, second.key)).status).toBe(200);
    expect((await call('DELETE', `/v1/keys/${second.id}`, second.key)).body.code).toBe('LAST_ADMIN_KEY');
  });

  it("tenant isolation: another tenant's key id is a 404 and stays valid; each lists only its own keys", async () => {
    const ofA = await makeKey(keyA, 'a-only', ['read']);
    expect(await call('DELETE', `/v1/keys/${ofA.id}`, keyB)).toMatchObject({ status: 404, body: { code: 'API_KEY_NOT_FOUND' } });
    expect((await call('GET', '/v1/sessions', ofA.key)).status).toBe(200);
    const listB = (await call('GET', '/v1/keys', keyB)).body.keys as Json[];
    expect(listB.map((k) => k.name)).toEqual(['first key']);
    expect(((await call('GET', '/v1/keys', keyA)).body.keys as Json[]).map((k) => k.id)).toContain(ofA.id);
    // a key of B made by B is B's: A cannot see or revoke it
    const ofB = await makeKey(keyB, 'b-only', ['read']);
    expect((await call('DELETE', `/v1/keys/${ofB.id}`, keyA)).status).toBe(404);
    expect(((await call('GET', '/v1/keys', keyA)).body.keys as Json[]).map((k) => k.id)).not.toContain(ofB.id);
  });

  describe("the operator's /admin/tenants", () => {
    it('makes a tenant and its first key (every scope, once), lists tenants; a tenant key or no key is a 401', async () => {
      const made = await call('POST', '/admin/tenants', adminKey, { name: 'ops-made' });
      expect(made).toMatchObject({ status: 201, body: { tenant: { id: expect.any(String), name: 'ops-made' }, key: { scopes: ['play', 'read', 'admin'] } } });
      const key = (made.body.key as { key: string }).key;
      expect((await call('GET', '/v1/keys', key)).status).toBe(200);
      const tenantId = (made.body.tenant as { id: string }).id;
      expect((await tenantEvents(tenantId)).map((e) => [e.type, e.data.by])).toEqual([
        ['tenant.created@1', 'operator'],
        ['api-key.created@1', 'operator'],
      ]);
      const list = await call('GET', '/admin/tenants', adminKey);
      expect((list.body.tenants as Json[]).map((t) => t.name)).toEqual(expect.arrayContaining(['a', 'b', 'ops-made']));
      for (const key2 of [null, keyA, key]) {
        expect(await call('GET', '/admin/tenants', key2)).toMatchObject({ status: 401, body: { code: 'ADMIN_KEY_REQUIRED' } });
        expect((await call('POST', '/admin/tenants', key2, { name: 'x' })).status).toBe(401);
      }
      expect((await call('POST', '/admin/tenants', adminKey, { name: 3 })).body.issues).toEqual([{ path: 'name', message: expect.any(String) }]);
    });

    it("makes, lists and revokes a tenant's keys (its last admin key too); another tenant's key id or an unknown tenant is a 404", async () => {
      const made = await call('POST', '/admin/tenants', adminKey, { name: 'ops-keys' });
      const { id: tenantId } = made.body.tenant as { id: string };
      const first = made.body.key as { id: string; key: string };
      const extra = await call('POST', `/admin/tenants/${tenantId}/keys`, adminKey, { name: 'ci', scopes: ['play'] });
      expect(extra).toMatchObject({ status: 201, body: { name: 'ci', scopes: ['play'], key: expect.stringMatching(/^cvl_/) } });
      expect(((await call('GET', `/admin/tenants/${tenantId}/keys`, adminKey)).body.keys as Json[]).map((k) => k.name)).toEqual(['first key', 'ci']);
      // B's key id under this tenant: 404, and B's key still works
      const ofB = await makeKey(keyB, 'b-key', ['read']);
      expect(await call('DELETE', `/admin/tenants/${tenantId}/keys/${ofB.id}`, adminKey)).toMatchObject({ status: 404, body: { code: 'API_KEY_NOT_FOUND' } });
      expect((await call('GET', '/v1/sessions', ofB.key)).status).toBe(200);
      // the operator may revoke the last admin key
      expect((await call('DELETE', `/admin/tenants/${tenantId}/keys/${first.id}`, adminKey)).status).toBe(200);
      expect((await call('GET', '/v1/keys', first.key)).status).toBe(401);
      const unknown = randomUUID();
      expect((await call('GET', `/admin/tenants/${unknown}/keys`, adminKey)).body.code).toBe('TENANT_NOT_FOUND');
      expect((await call('POST', `/admin/tenants/${unknown}/keys`, adminKey, { name: 'x', scopes: ['read'] })).body.code).toBe('TENANT_NOT_FOUND');
      expect((await tenantEvents(tenantId)).map((e) => [e.type, e.data.by])).toEqual([
        ['tenant.created@1', 'operator'],
        ['api-key.created@1', 'operator'],
        ['api-key.created@1', 'operator'],
        ['api-key.revoked@1', 'operator'],
      ]);
    });
    it("every operator route refuses a tenant's key (every scope; its own tenant or another's, any letter case): 401, nothing changes", async () => {
      const ofB = await makeKey(keyB, 'b-target', ['read']);
      const eventsBefore = [(await tenantEvents(tenantA)).length, (await tenantEvents(tenantB)).length];
      const keysOfB = (await call('GET', '/v1/keys', keyB)).body.keys;
      // keyA has every scope, admin included: the tenant's admin scope is not the operator's key
      expect((await covel.engine.tenants.authenticate(keyA))?.key.scopes).toEqual(['play', 'read', 'admin']);
      for (const id of [tenantA, tenantB])
        for (const [method, path, body] of [
          ['GET', '/admin/tenants', undefined],
          ['POST', '/admin/tenants', { name: 'intruder' }],
          ['GET', `/admin/tenants/${id}/keys`, undefined],
          ['POST', `/admin/tenants/${id}/keys`, { name: 'intruder', scopes: ['play', 'read', 'admin'] }],
          ['DELETE', `/admin/tenants/${id}/keys/${ofB.id}`, undefined],
          ['GET', `/admin/tenants/${id}/limits`, undefined],
          ['PUT', `/admin/tenants/${id}/limits`, { requestsPerSecond: 1e6, burst: 1e6 }],
          ['GET', `/admin/usage?from=2026-01-01&to=2026-01-02&tenantId=${id}`, undefined],
          ['GET', `/Admin/Tenants/${id}/KEYS`, undefined],
          ['PUT', `/ADMIN/tenants/${id}/Limits`, { burst: 1e6 }],
        ] as const)
          for (const key of [keyA, keyB]) expect([method, path, (await call(method, path, key, body)).status]).toEqual([method, path, 401]);
      expect([(await tenantEvents(tenantA)).length, (await tenantEvents(tenantB)).length]).toEqual(eventsBefore);
      expect((await call('GET', '/v1/keys', keyB)).body.keys).toEqual(keysOfB);
      expect((await call('GET', '/v1/sessions', ofB.key)).status).toBe(200);
      expect((await covel.engine.tenants.list()).map((t) => t.name)).not.toContain('intruder');
      // the operator's key reaches the same routes (the refusals above were the key's, not the paths')
      expect((await call('GET', `/Admin/Tenants/${tenantB}/KEYS`, adminKey)).status).toBe(200);
    });
  });

  it('a few turns with keys made through the API leave no key and no hash in the log, any other table or the log lines', async () => {
    const admin = await makeKey(keyA, 'grep admin', ['admin']);
    const play = await makeKey(admin.key, 'grep play', ['play', 'read']);
    const client = new PlayClient(covel.baseUrl, play.key);
    const { id } = await client.createSession({});
    for (const text of ['Look around', 'Walk to the river', 'Listen']) {
      const { executionId } = await client.submit(id, text);
      await client.waitFor(executionId, 60_000);
    }
    await call('DELETE', `/v1/keys/${play.id}`, admin.key);
    // the traces of the session are written (trace_events, an async projection)
    await covel.engine.projector.waitFor({ projection: 'trace_events', streamId: id, timeoutMs: 20_000 });
    const pepper = await loadKeyPepper(covel.engine.database.db, null);
    const secrets = [admin, play].flatMap(({ key }) => [key, hmacApiKey(key, pepper), sha256ApiKey(key)]);
    const db = covel.engine.database.db;
    const tables = (
      await sql<{
        table_name: string;
      }>`select table_name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(db)
    ).rows.map((r) => r.table_name);
    expect(tables).toEqual(expect.arrayContaining(['events', 'trace_events', 'api_keys', 'turn_messages']));
    for (const table of tables.filter((t) => t !== 'api_keys')) {
      const { rows } = await sql<{ row: string }>`select row_to_json(t)::text as row from ${sql.table(table)} t`.execute(db);
      const text = rows.map((r) => r.row).join('\n');
      for (const secret of secrets) expect([table, text.includes(secret)]).toEqual([table, false]);
    }
    // its own row holds the HMAC only
    const rows = (await db.selectFrom('api_keys').select(['key_hash']).where('id', 'in', [admin.id, play.id]).execute()).map((r) => r.key_hash);
    expect(rows.sort()).toEqual([hmacApiKey(admin.key, pepper), hmacApiKey(play.key, pepper)].sort());
    expect(logLines.length).toBeGreaterThan(0);
    const logged = logLines.join('');
    for (const secret of secrets) expect(logged.includes(secret)).toBe(false);
  }, 180_000);
});
