import { createHash } from 'node:crypto';
import { get, request } from 'node:http';
import { startEmbedded, type EmbeddedEngine } from '../support/embedded';

/**
 * The JSON answer of a write is written without express's ETag of it (JsonReplyAdapter, issue 33):
 * no conditional request can use one. GET keeps its ETag and 304; a route's own ETag (a world's
 * revision) is still sent.
 */
describe('JSON answers: writes without a body ETag, reads as before', () => {
  let covel: EmbeddedEngine;
  let auth: Record<string, string> = {};

  beforeAll(async () => {
    covel = await startEmbedded();
    auth = { authorization: `Bearer ${(await covel.engine.tenants.create('json-reply')).apiKey}` };
  }, 120_000);
  afterAll(async () => {
    await covel?.stop();
  }, 120_000);

  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${covel.baseUrl}${path}`, {
      method,
      headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  it('a POST answer: JSON in UTF-8 with its length, no ETag; a GET: an ETag, and 304 when it matches', async () => {
    const created = await call('POST', '/v1/sessions', {});
    expect(created.status).toBe(201);
    const session = (await created.json()) as { id: string };
    const input = await call('POST', `/v1/sessions/${session.id}/inputs`, { text: 'café — 🐉' });
    expect(input.status).toBe(202);
    expect(input.headers.get('etag')).toBeNull();
    expect(input.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const text = await input.text();
    expect(Number(input.headers.get('content-length'))).toBe(Buffer.byteLength(text));
    const { executionId } = JSON.parse(text) as { executionId: string };
    expect(executionId).toMatch(/^[0-9a-f-]{36}$/);

    const read = await call('GET', '/v1/limits');
    expect(read.status).toBe(200);
    expect(read.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const etag = read.headers.get('etag');
    expect(etag).toMatch(/^W\/"/);
    // node:http, not fetch: fetch adds `Cache-Control: no-cache` to a conditional request
    const status = await new Promise<number | undefined>((resolve, reject) =>
      get(`${covel.baseUrl}/v1/limits`, { headers: { ...auth, 'if-none-match': etag! } }, (res) => {
        res.resume();
        resolve(res.statusCode);
      }).on('error', reject),
    );
    expect(status).toBe(304);
  });

  /** express's weak ETag of a body (the `etag` package): its length in hex and its SHA-1, base64, cut to 27 characters. */
  const weakEtag = (bytes: Buffer) => `W/"${bytes.length.toString(16)}-${createHash('sha1').update(bytes).digest('base64').slice(0, 27)}"`;

  /** A GET or HEAD by node:http (fetch adds `Cache-Control: no-cache` to a conditional request): status, headers, body bytes. */
  const raw = (method: 'GET' | 'HEAD', path: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number | undefined; headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
      request(`${covel.baseUrl}${path}`, { method, headers: { ...auth, ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      })
        .on('error', reject)
        .end();
    });

  it('a GET answer is as express writes it: UTF-8 JSON, its length, its weak ETag; a HEAD the same headers and no body; a 304 no body headers', async () => {
    const created = await call('POST', '/v1/sessions', {});
    const session = (await created.json()) as { id: string };
    const { executionId } = (await (await call('POST', `/v1/sessions/${session.id}/inputs`, { text: 'ünïcode 🐉 and more' })).json()) as {
      executionId: string;
    };
    const path = `/v1/executions/${executionId}`;
    const read = await raw('GET', path);
    expect(read.status).toBe(200);
    expect(read.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Number(read.headers['content-length'])).toBe(read.body.length);
    expect(read.headers.etag).toBe(weakEtag(read.body));
    expect(JSON.parse(read.body.toString('utf8'))).toMatchObject({ executionId });
    const head = await raw('HEAD', path);
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(typeof head.headers.etag).toBe('string');
    expect(Number(head.headers['content-length'])).toBeGreaterThan(0);
    const limits = await raw('GET', '/v1/limits');
    const notModified = await raw('GET', '/v1/limits', { 'if-none-match': String(limits.headers.etag) });
    expect(notModified.status).toBe(304);
    expect(notModified.body.length).toBe(0);
    expect(notModified.headers['content-type']).toBeUndefined();
    expect(notModified.headers['content-length']).toBeUndefined();
    expect(notModified.headers.etag).toBe(limits.headers.etag);
    const stale = await raw('GET', '/v1/limits', { 'if-none-match': 'W/"0-other"' });
    expect(stale.status).toBe(200);
    expect(stale.body.equals(limits.body)).toBe(true);
    // text beyond ASCII: its length in UTF-8 bytes, the bytes the text's (written with the headers in one piece)
    await raw('GET', `${path}?waitMs=20000`);
    const messages = await raw('GET', `/v1/sessions/${session.id}/messages`);
    expect(messages.status).toBe(200);
    expect(Number(messages.headers['content-length'])).toBe(messages.body.length);
    expect(messages.body.toString('utf8')).toContain('ünïcode 🐉 and more');
    expect(messages.headers.etag).toBe(weakEtag(messages.body));
  });

  it('a route’s own ETag on a write is kept (a new world: its revision)', async () => {
    const world = await call('POST', '/v1/worlds', { name: 'etag' });
    expect(world.status).toBe(201);
    expect(world.headers.get('etag')).toBe('"1"');
  });

  it('an error answer of a write is the error filter’s, unchanged', async () => {
    const res = await call('POST', '/v1/sessions/00000000-0000-4000-8000-000000000000/inputs', { text: 'hi' });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toMatchObject({ code: expect.any(String) });
  });
});
