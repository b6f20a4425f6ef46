import { unzipSync } from 'fflate';
import { rebuildInline } from '../../libs/events';
import { engineInlineProjections } from '../../libs/engine';
import { importWorldArchive } from '../../libs/world-files';
import { PlayClient } from '../../apps/play/play-client';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';
import { countEvents } from '../support/world-files';

/** Issue 29 item 1: worlds as tenant resources in the event log, through the HTTP API. */
describe('worlds a tenant owns (HTTP API)', () => {
  let covel: EmbeddedEngine;
  let keyA = '';
  let keyB = '';

  beforeAll(async () => {
    covel = await startEmbedded();
    keyA = (await covel.engine.tenants.create('world-a')).apiKey;
    keyB = (await covel.engine.tenants.create('world-b')).apiKey;
  }, 60_000);
  afterAll(async () => {
    await covel?.stop();
  });

  type World = { id: string; name: string; revision: number; archived: boolean; builtIn: boolean; document: Record<string, unknown> };
  const call = async (key: string, method: string, path: string, options: { body?: unknown; raw?: string; headers?: Record<string, string> } = {}) => {
    const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
    const res = await fetch(`${covel.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
      ...(body === undefined ? {} : { body }),
    });
    const text = await res.text();
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      json = text;
    }
    return { status: res.status, headers: res.headers, json: json as Record<string, unknown> & World };
  };
  const eventCount = () => countEvents(covel.engine.database.db);

  const lighthouse = {
    name: 'Saltmarrow Light 灯塔 🌊',
    description: 'A lighthouse on a reef where the sea keeps its own records.',
    lore: 'The keeper writes down every ship that passes, even the ones that are not there.\n\nThe lamp burns whale oil, and the oil remembers.',
    characters: [
      { id: 'keeper', name: 'Ysolde', type: 'npc', description: 'The keeper, who speaks to the lamp.' },
      { id: 'you', name: 'Wren', type: 'player', description: 'A clerk sent to audit the light.' },
    ],
    seats: [{ id: 'player', characterId: 'you', primary: true }],
    lorebook: [{ id: 'ledger', keys: ['ledger'], content: 'The ledger has a page for every drowned name, written before the drowning.' }],
    plugins: ['narrator'],
  };

  it('creates, lists (built-in first, cursor pages), reads, replaces with If-Match, patches (RFC 7396) and archives a world', async () => {
    const created = await call(keyA, 'POST', '/v1/worlds', { body: lighthouse, headers: { 'idempotency-key': 'create-1' } });
    expect(created.status).toBe(201);
    expect(created.headers.get('etag')).toBe('"1"');
    expect(created.headers.get('location')).toBe(`/v1/worlds/${created.json.id}`);
    expect(created.json).toMatchObject({ name: lighthouse.name, revision: 1, archived: false, builtIn: false, provenance: { kind: 'authored' } });
    const id = created.json.id;
    // the same key and body: the first answer, nothing appended
    const before = await eventCount();
    const again = await call(keyA, 'POST', '/v1/worlds', { body: lighthouse, headers: { 'idempotency-key': 'create-1' } });
    expect([again.status, again.json.id, again.headers.get('idempotent-replayed')]).toEqual([201, id, 'true']);
    expect(await eventCount()).toBe(before);

    // the list: the deployment's built-in worlds first (read-only), then the tenant's; pages by cursor
    const page1 = await call(keyA, 'GET', '/v1/worlds?limit=1');
    expect(page1.status).toBe(200);
    const first = page1.json as unknown as { items: World[]; nextCursor: string };
    expect(first.items.map((w) => [w.id, w.builtIn])).toEqual([['emberback', true]]);
    const page2 = (await call(keyA, 'GET', `/v1/worlds?limit=1&cursor=${first.nextCursor}`)).json as unknown as {
      items: (World & Record<string, unknown>)[];
      nextCursor: string | null;
    };
    expect(page2.items.map((w) => w.id)).toEqual([id]);
    expect(page2.nextCursor).toBeNull();
    expect((await call(keyA, 'GET', '/v1/worlds?cursor=bm9wZQ')).status).toBe(400);
    const forged = Buffer.from(JSON.stringify({ kind: 'tenant', position: '9999999999999999999' })).toString('base64url');
    expect((await call(keyA, 'GET', `/v1/worlds?cursor=${forged}`)).json.code).toBe('INVALID_CURSOR');
    // a page of the list holds each world's counts (read without its document)
    expect(page2.items[0]).toMatchObject({ description: lighthouse.description, characters: 2, lorebookEntries: 1, openings: 0 });

    // PUT: 428 without If-Match, 412 on a stale one, 200 with the current one
    const edited = { ...lighthouse, description: 'A lighthouse whose lamp has gone out.' };
    expect((await call(keyA, 'PUT', `/v1/worlds/${id}`, { body: edited })).status).toBe(428);
    expect((await call(keyA, 'PUT', `/v1/worlds/${id}`, { body: edited, headers: { 'if-match': '"7"' } })).status).toBe(412);
    const put = await call(keyA, 'PUT', `/v1/worlds/${id}`, { body: edited, headers: { 'if-match': '"1"' } });
    expect([put.status, put.json.revision, put.headers.get('etag')]).toEqual([200, 2, '"2"']);
    expect((await call(keyA, 'PUT', `/v1/worlds/${id}`, { body: edited, headers: { 'if-match': '"1"' } })).status).toBe(412);

    // PATCH: a merge patch, validated whole; null removes a key
    const patched = await call(keyA, 'PATCH', `/v1/worlds/${id}`, {
      body: { tags: ['sea'], description: null, characters: [lighthouse.characters[0], { ...lighthouse.characters[1], name: 'ورن' }] },
      headers: { 'if-match': '"2"', 'content-type': 'application/merge-patch+json' },
    });
    expect(patched.status).toBe(200);
    expect(patched.json.revision).toBe(3);
    expect(patched.json.document).toMatchObject({ tags: ['sea'], description: '' });
    const bad = await call(keyA, 'PATCH', `/v1/worlds/${id}`, { body: { seats: [{ id: 'x', characterId: 'nobody' }] }, headers: { 'if-match': '"3"' } });
    expect(bad.status).toBe(400);
    expect(bad.json.issues).toEqual([{ path: 'seats.0.characterId', message: 'no character "nobody"' }]);

    // a body nested deeper than any world: a 400 naming the place before it is hashed or merged
    const deep = `{"extensions":${'{"d":'.repeat(20_000)}"x"${'}'.repeat(20_000)}}`;
    for (const method of ['PATCH', 'PUT']) {
      const answer = await call(keyA, method, `/v1/worlds/${id}`, { raw: deep, headers: { 'if-match': '"3"', 'idempotency-key': `deep-${method}` } });
      expect([answer.status, answer.json.code]).toEqual([400, 'INVALID_WORLD']);
    }
    // the same keyed PUT twice at once: one revision, and both answers name it
    const same = { body: { ...lighthouse, tags: ['twice'] }, headers: { 'if-match': '"3"', 'idempotency-key': 'put-twice' } };
    const both = await Promise.all([call(keyA, 'PUT', `/v1/worlds/${id}`, same), call(keyA, 'PUT', `/v1/worlds/${id}`, same)]);
    expect(both.map((a) => [a.status, a.json.revision])).toEqual([
      [200, 4],
      [200, 4],
    ]);
    const current = 4;

    // any revision stays readable
    const r1 = await call(keyA, 'GET', `/v1/worlds/${id}?revision=1`);
    expect([r1.status, r1.json.revision, r1.json.document.description, r1.headers.get('etag')]).toEqual([200, 1, lighthouse.description, '"1"']);
    expect((await call(keyA, 'GET', `/v1/worlds/${id}?revision=9`)).status).toBe(404);

    // a built-in world is read-only
    expect((await call(keyA, 'GET', '/v1/worlds/emberback')).json).toMatchObject({ builtIn: true, revision: 1 });
    expect((await call(keyA, 'PUT', '/v1/worlds/emberback', { body: lighthouse, headers: { 'if-match': '"1"' } })).status).toBe(409);

    // a keyed session on it, sent again after the world changed and was archived: the first session, not an error
    const keyed = { body: { worldId: id.toUpperCase(), opening: null }, headers: { 'idempotency-key': 'session-on-world' } };
    const firstSession = await call(keyA, 'POST', '/v1/sessions', keyed);
    expect(firstSession.status).toBe(201);

    // archive: listed only on request, no new session on it
    const archived = await call(keyA, 'DELETE', `/v1/worlds/${id}`);
    expect([archived.status, archived.json.archived]).toEqual([200, true]);
    expect(((await call(keyA, 'GET', '/v1/worlds')).json as unknown as { items: World[] }).items.map((w) => w.id)).toEqual(['emberback']);
    expect(((await call(keyA, 'GET', '/v1/worlds?archived=true')).json as unknown as { items: World[] }).items.map((w) => w.id)).toEqual(['emberback', id]);
    const session = await call(keyA, 'POST', '/v1/sessions', { body: { worldId: id } });
    expect([session.status, session.json.code]).toEqual([409, 'WORLD_ARCHIVED']);
    const retried = await call(keyA, 'POST', '/v1/sessions', keyed);
    expect([retried.status, retried.json.id, retried.headers.get('idempotent-replayed')]).toEqual([201, firstSession.json.id, 'true']);
    expect((await call(keyA, 'PATCH', `/v1/worlds/${id}`, { body: { tags: [] }, headers: { 'if-match': `"${current}"` } })).json.code).toBe('WORLD_ARCHIVED');

    // replay: the worlds view rebuilt from the log alone is the same
    const rows = () => covel.engine.database.db.selectFrom('worlds').selectAll().orderBy('world_id').execute();
    const live = await rows();
    expect((await rebuildInline({ db: covel.engine.database.db, projections: engineInlineProjections })).failures).toEqual([]);
    expect(await rows()).toEqual(live);
  }, 60_000);

  it("another tenant's world is not found everywhere: read, write, export, archive, sessions on it", async () => {
    const { id } = (await call(keyA, 'POST', '/v1/worlds', { body: lighthouse })).json;
    const before = await eventCount();
    const answers = await Promise.all([
      call(keyB, 'GET', `/v1/worlds/${id}`),
      call(keyB, 'GET', `/v1/worlds/${id}?revision=1`),
      call(keyB, 'PUT', `/v1/worlds/${id}`, { body: lighthouse, headers: { 'if-match': '"1"' } }),
      call(keyB, 'PATCH', `/v1/worlds/${id}`, { body: { tags: [] }, headers: { 'if-match': '"1"' } }),
      call(keyB, 'DELETE', `/v1/worlds/${id}`),
      call(keyB, 'GET', `/v1/worlds/${id}/export`),
      call(keyB, 'GET', `/v1/worlds/${id}/export?format=card-v3`),
      call(keyB, 'POST', '/v1/sessions', { body: { worldId: id } }),
    ]);
    expect(answers.map((a) => [a.status, a.json.code])).toEqual(Array(8).fill([404, 'WORLD_NOT_FOUND']));
    expect(((await call(keyB, 'GET', '/v1/worlds')).json as unknown as { items: World[] }).items.map((w) => w.id)).toEqual(['emberback']);
    expect(await eventCount()).toBe(before);
  }, 60_000);

  it('exports the WORLD.md folder as a zip that imports to the identical document', async () => {
    const { id, document } = (await call(keyA, 'POST', '/v1/worlds', { body: lighthouse })).json;
    const res = await fetch(`${covel.baseUrl}/v1/worlds/${id}/export`, { headers: { authorization: `Bearer ${keyA}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/zip');
    const zip = new Uint8Array(await res.arrayBuffer());
    expect(Object.keys(unzipSync(zip))).toEqual(['saltmarrow-light/WORLD.md']);
    const local = importWorldArchive(zip);
    expect(local.ok && local.document).toEqual(document);
    const imported = await fetch(`${covel.baseUrl}/v1/worlds/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keyA}`, 'content-type': 'application/zip' },
      body: zip,
    });
    expect(imported.status).toBe(201);
    const world = (await imported.json()) as World & { provenance: unknown };
    expect(world.id).not.toBe(id);
    expect(world.provenance).toEqual({ kind: 'imported', format: 'world-folder' });
    expect(world.document).toEqual(document);
  }, 60_000);

  it('a session records the revision it starts on: an edit changes new sessions only; its audit stays identical; a recorded move takes the next turns to the edit', async () => {
    const { apiKey: key } = await covel.engine.tenants.create('world-sessions');
    const client = new PlayClient(covel.baseUrl, key);
    const { id } = (await call(key, 'POST', '/v1/worlds', { body: lighthouse })).json;
    const { id: sessionId } = await client.createSession({ worldId: id });
    const lore = async (session: string) => {
      const calls = await client.request<{ turnId: string; requestText: string }[]>('GET', `/v1/sessions/${session}/llm-calls`);
      return calls[calls.length - 1].requestText;
    };
    const turn = async (session: string, text: string) => {
      const r = await client.submit(session, text);
      await client.waitFor(r.executionId, 30_000);
      return r.turnId;
    };
    // the revision a session runs, as the sessions list and the session's view give it (the inspector shows it)
    const runs = async () => {
      const list = await client.request<{ sessionId: string; worldId: string | null; worldRevision: number | null }[]>('GET', '/v1/sessions');
      const one = await Promise.all(list.map((s) => client.request<{ worldRevision: number | null }>('GET', `/v1/sessions/${s.sessionId}`)));
      expect(one.map((s) => s.worldRevision)).toEqual(list.map((s) => s.worldRevision));
      return Object.fromEntries(list.map((s) => [s.sessionId, [s.worldId, s.worldRevision]]));
    };
    const t1 = await turn(sessionId, 'Open the ledger');
    expect(await lore(sessionId)).toContain('even the ones that are not there');

    const edit = { ...lighthouse, lore: 'The lamp has gone dark, and the keeper counts the dark instead.' };
    expect((await call(key, 'PUT', `/v1/worlds/${id}`, { body: edit, headers: { 'if-match': '"1"' } })).status).toBe(200);
    const t2 = await turn(sessionId, 'Ask Ysolde about the ledger');
    expect(await lore(sessionId)).toContain('even the ones that are not there');
    const { id: fresh } = await client.createSession({ worldId: id.toUpperCase() });
    // a UUID in capitals names the same world, and the session records it as the log spells it
    expect((await call(key, 'GET', `/v1/sessions/${fresh}`)).json).toMatchObject({ worldId: id, worldRevision: 2 });
    await turn(fresh, 'Look around');
    expect(await lore(fresh)).toContain('counts the dark instead');
    expect(await runs()).toEqual({ [sessionId]: [id, 1], [fresh]: [id, 2] });

    // move the first session on purpose: the turns after it read revision 2; the earlier ones keep revision 1
    const moved = await call(key, 'POST', `/v1/sessions/${sessionId}/world-revision`, { body: {} });
    expect(moved.json).toEqual({ worldId: id, revision: 2, fromRevision: 1 });
    expect((await call(key, 'POST', `/v1/sessions/${sessionId}/world-revision`, { body: {} })).json.code).toBe('WORLD_REVISION_NOT_NEWER');
    const t3 = await turn(sessionId, 'Light the lamp');
    expect(await lore(sessionId)).toContain('counts the dark instead');
    expect((await runs())[sessionId]).toEqual([id, 2]);
    for (const turnId of [t1, t2, t3]) {
      const audit = await client.request<{ identical: boolean }>('GET', `/v1/sessions/${sessionId}/turns/${turnId}/audit`);
      expect(audit.identical).toBe(true);
    }
    // moved again: the last move counts
    expect((await call(key, 'PUT', `/v1/worlds/${id}`, { body: lighthouse, headers: { 'if-match': '"2"' } })).json.revision).toBe(3);
    expect((await call(key, 'POST', `/v1/sessions/${sessionId}/world-revision`, { body: { revision: 3 } })).json).toEqual({
      worldId: id,
      revision: 3,
      fromRevision: 2,
    });
    // a built-in world's session has nothing to move to
    const { id: builtIn } = await client.createSession({ worldId: 'emberback' });
    expect((await call(key, 'POST', `/v1/sessions/${builtIn}/world-revision`, { body: {} })).json.code).toBe('WORLD_READ_ONLY');
    const { id: none } = await client.createSession({});
    expect(await runs()).toEqual({ [sessionId]: [id, 3], [fresh]: [id, 2], [builtIn]: ['emberback', null], [none]: [null, null] });
  }, 120_000);
});
