import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { Logger } from '@nestjs/common';
import { PlayClient } from '../../apps/play/play-client';
import { startEmbedded, type EmbeddedEngine } from '../support/embedded';

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: { statusCode?: number; code?: string; message?: string; issues?: { path: string; message: string }[] } | null;
}

/**
 * One HTTP request with exactly these bytes and headers (node:http, not fetch: fetch normalises
 * `..` and `%2e%2e` out of paths, and cannot lie about content-length or send a raw gzip header).
 * With `partial`, the body is written but the request is never ended: the answer must come anyway.
 */
function send(
  baseUrl: string,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer; partial?: boolean },
): Promise<RawResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, method: options.method ?? 'GET', path: options.path, headers: options.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: RawResponse['json'] = null;
          try {
            json = JSON.parse(text) as RawResponse['json'];
          } catch {
            json = null;
          }
          if (options.partial) req.destroy();
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => {
      // a server that answers early and closes may cut the rest of an upload: that is fine
      if (!options.partial) reject(error);
    });
    if (options.body !== undefined) req.write(options.body);
    if (!options.partial) req.end();
  });
}

/** Every JSON escape of every character: `\uXXXX` (a surrogate pair for astral characters). */
const escapeAll = (text: string) => Array.from({ length: text.length }, (_, i) => `\\u${text.charCodeAt(i).toString(16).padStart(4, '0')}`).join('');

const NUL = String.fromCharCode(0);
const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';

describe('API against hostile bytes, bodies and ids (embedded default)', () => {
  let covel: EmbeddedEngine;
  let a: PlayClient;
  let key: string;
  let sessionId: string;
  const logged: string[] = [];
  const spies: jest.SpyInstance[] = [];

  beforeAll(async () => {
    covel = await startEmbedded();
    key = (await covel.engine.tenants.create('hostile')).apiKey;
    a = new PlayClient(covel.baseUrl, key);
    sessionId = (await a.createSession()).id;
    // every line the API would log (Nest logger) and anything written as an error by Express itself
    for (const level of ['error', 'warn', 'log'] as const) {
      spies.push(jest.spyOn(Logger.prototype, level).mockImplementation((...args: unknown[]) => void logged.push(`${level}: ${args.map(String).join(' ')}`)));
    }
    spies.push(jest.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void logged.push(`console.error: ${args.map(String).join(' ')}`)));
  }, 120_000);
  afterAll(async () => {
    for (const spy of spies) spy.mockRestore();
    await covel.stop();
  }, 120_000);

  const auth = () => ({ authorization: `Bearer ${key}` });
  const json = { 'content-type': 'application/json' };
  const inputs = () => `/v1/sessions/${sessionId}/inputs`;
  const post = (path: string, headers: Record<string, string>, body?: string | Buffer) =>
    send(covel.baseUrl, {
      method: 'POST',
      path,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }) },
      body,
    });

  const expectNoStackLogged = () => {
    expect(logged.filter((l) => /\n\s+at /.test(l) || /^error:/.test(l) || /^console\.error/.test(l))).toEqual([]);
  };

  describe('item 4: text must be well-formed Unicode, without NUL, not blank', () => {
    it.each([
      ['a NUL written as an escape', '{"text":"a\\u0000b"}', /NUL/],
      ['a lone high surrogate', '{"text":"abc\\ud800"}', /surrogate/],
      ['a lone low surrogate', '{"text":"\\udc00abc"}', /surrogate/],
      ['surrogates in the wrong order', '{"text":"\\ude00\\ud83d"}', /surrogate/],
    ])('%s is a 400 naming text, never a 500', async (_name, body, reason) => {
      const res = await post(inputs(), { ...auth(), ...json }, body);
      expect(res.status).toBe(400);
      expect(res.json?.issues?.map((i) => i.path)).toEqual(['text']);
      expect(res.json?.message).toMatch(reason);
      expect(res.text).not.toMatch(/\\u0000|\\ud800|\\udc00|\\ude00/);
    });

    it('a raw NUL byte inside a JSON string is malformed JSON: 400, not 500', async () => {
      const res = await post(inputs(), { ...auth(), ...json }, '{"text":"a\u0000b"}');
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ code: 'MALFORMED_BODY', issues: [{ path: '(body)', message: expect.stringMatching(/JSON/) }] });
      expect(res.text).not.toContain(NUL);
      expect(res.text).not.toContain('\\u0000');
    });

    it.each([
      ['zero-width space', '\u200b'],
      ['ZWNJ, ZWJ, word joiner and BOM', '\u200c\u200d\u2060\ufeff'],
      ['zero-width characters among whitespace', ' \u200b\n\t\u200d \u3000'],
      ['other format characters (soft hyphen, LRM, RLO, tag space)', '\u00ad\u200e\u202e\u{e0020}'],
      ['variation selectors and a combining grapheme joiner', '\ufe0f\u034f'],
    ])('text of only %s counts as empty: 400 naming text', async (_name, text) => {
      const res = await post(inputs(), { ...auth(), ...json }, JSON.stringify({ text }));
      expect(res.status).toBe(400);
      expect(res.json?.issues).toEqual([{ path: 'text', message: 'must not be empty' }]);
    });

    it('the same rules apply to every string of the session body (worldId, locale)', async () => {
      const nul = await post('/v1/sessions', { ...auth(), ...json }, '{"worldId":"emberback\\u0000"}');
      expect(nul.status).toBe(400);
      expect(nul.json?.issues?.map((i) => i.path)).toEqual(['worldId']);
      expect(nul.json?.message).toMatch(/NUL/);
      expect(nul.text).not.toContain('\\u0000');
      const lone = await post('/v1/sessions', { ...auth(), ...json }, '{"worldId":"\\ud800"}');
      expect(lone.status).toBe(400);
      expect(lone.json?.issues?.map((i) => i.path)).toEqual(['worldId']);
      expect(lone.json?.message).toMatch(/surrogate|well-formed/);
      const blank = await post('/v1/sessions', { ...auth(), ...json }, '{"worldId":"\\u200b"}');
      expect(blank.status).toBe(400);
      expect(blank.json?.issues).toEqual([{ path: 'worldId', message: 'must not be empty' }]);
      const locale = await post('/v1/sessions', { ...auth(), ...json }, '{"locale":"en\\u0000"}');
      expect(locale.status).toBe(400);
      expect(locale.json?.issues?.map((i) => i.path)).toEqual(['locale']);
    });

    it('text with emoji, ZWJ sequences, CJK and RTL is accepted as sent', async () => {
      const text = '👩‍👩‍👧 龍が来た مرحبا بالعالم שלום ✋🏽';
      const { id } = await a.createSession();
      const { executionId } = await a.submit(id, text);
      await a.waitFor(executionId, 20_000);
      expect((await a.messages(id))[0].text).toBe(text);
    });
  });

  describe('item 4: ids that are not UUIDs are 404 on every endpoint, never 500', () => {
    const badIds = ['%00', 'a%00b', '..', '%2e%2e', '%2E%2E', 'x'.repeat(4000), 'not-a-uuid', '%ZZ', '%ED%A0%80', '%C0%80', `${UNKNOWN_UUID}%00`, UNKNOWN_UUID];
    const endpoints: [string, (id: string) => string][] = [
      ['POST inputs', (id) => `/v1/sessions/${id}/inputs`],
      ['GET messages', (id) => `/v1/sessions/${id}/messages`],
      ['GET llm-calls', (id) => `/v1/sessions/${id}/llm-calls`],
      ['GET prefix-report', (id) => `/v1/sessions/${id}/prefix-report`],
      ['GET audit (session id)', (id) => `/v1/sessions/${id}/turns/${UNKNOWN_UUID}/audit`],
      ['GET audit (turn id)', (id) => `/v1/sessions/${sessionId}/turns/${id}/audit`],
      ['GET execution', (id) => `/v1/executions/${id}`],
    ];
    it.each(endpoints)('%s', async (name, path) => {
      for (const id of badIds) {
        const res = name.startsWith('POST')
          ? await post(path(id), { ...auth(), ...json }, '{"text":"hi"}')
          : await send(covel.baseUrl, { path: path(id), headers: auth() });
        expect([id.slice(0, 20), res.status]).toEqual([id.slice(0, 20), 404]);
        expect(res.json?.statusCode).toBe(404);
        expect(res.text).not.toContain(NUL);
        expect(res.text).not.toMatch(/\\u0000|%00/);
        expect(res.text.length).toBeLessThan(300);
      }
    });
  });

  describe('item 5: body parsing errors are 4xx, not 500', () => {
    it('a body over the limit is 413 (declared length, or read length with chunked encoding)', async () => {
      const big = JSON.stringify({ text: 'x'.repeat(300_000) });
      const declared = await post(inputs(), { ...auth(), ...json }, big);
      expect(declared.status).toBe(413);
      expect(declared.json).toMatchObject({ statusCode: 413, code: 'BODY_TOO_LARGE' });
      expect(declared.json?.message).toMatch(/262144 bytes/);
      const chunked = await send(covel.baseUrl, { method: 'POST', path: inputs(), headers: { ...auth(), ...json, 'transfer-encoding': 'chunked' }, body: big });
      expect(chunked.status).toBe(413);
      expect(chunked.json?.code).toBe('BODY_TOO_LARGE');
    });

    it('a content-length that claims more than the limit is 413 at once, without waiting for the bytes', async () => {
      const res = await send(covel.baseUrl, {
        method: 'POST',
        path: inputs(),
        headers: { ...auth(), ...json, 'content-length': '50000000' },
        body: '{"text":"',
        partial: true,
      });
      expect(res.status).toBe(413);
    });

    it('a content-length shorter than the body is a 400 (node rejects the bytes after it as a broken request)', async () => {
      // this one is node's own answer (the surplus bytes parse as a bad next request): it holds before and after
      const res = await send(covel.baseUrl, {
        method: 'POST',
        path: inputs(),
        headers: { ...auth(), ...json, 'content-length': '5' },
        body: '{"text":"hello"}',
      });
      expect(res.status).toBe(400);
    });

    it('a body the size of 16,000 characters written as escape pairs fits under the limit', async () => {
      // 16,000 astral characters written as \uXXXX\uXXXX are 192,000 bytes of JSON, well over Express's
      // old 100 KB default; here 16,000 CJK characters as escapes (96,000 bytes) plus insignificant whitespace
      const body = `{"text":"${escapeAll('龍'.repeat(16_000))}"${' '.repeat(100_000)}}`;
      expect(Buffer.byteLength(body)).toBeGreaterThan(192_000);
      const res = await post(inputs(), { ...auth(), ...json }, body);
      expect(res.status).toBe(202);
    });

    const gzip = { ...json, 'content-encoding': 'gzip' };
    it.each<{ name: string; headers: Record<string, string>; body: string | Buffer; status: number; code: string; reason: RegExp }>([
      {
        name: 'charset=latin1',
        headers: { 'content-type': 'application/json; charset=latin1' },
        body: '{"text":"hi"}',
        status: 415,
        code: 'UNSUPPORTED_CHARSET',
        reason: /charset/,
      },
      {
        name: 'content-encoding: compress',
        headers: { ...json, 'content-encoding': 'compress' },
        body: '{"text":"hi"}',
        status: 415,
        code: 'UNSUPPORTED_ENCODING',
        reason: /encoding/,
      },
      { name: 'content-encoding: gzip with garbage', headers: gzip, body: 'this is not gzip at all', status: 400, code: 'MALFORMED_BODY', reason: /encoding/ },
      {
        name: 'content-encoding: gzip cut short',
        headers: gzip,
        body: gzipSync('{"text":"hello there"}').subarray(0, 12),
        status: 400,
        code: 'MALFORMED_BODY',
        reason: /encoding/,
      },
      {
        name: 'text/plain',
        headers: { 'content-type': 'text/plain' },
        body: '{"text":"hi"}',
        status: 415,
        code: 'UNSUPPORTED_MEDIA_TYPE',
        reason: /application\/json/,
      },
      {
        name: 'a form',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'text=hi',
        status: 415,
        code: 'UNSUPPORTED_MEDIA_TYPE',
        reason: /application\/json/,
      },
      { name: 'a body with no content-type', headers: {}, body: '{"text":"hi"}', status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', reason: /application\/json/ },
      { name: 'malformed JSON', headers: json, body: '{"text":', status: 400, code: 'MALFORMED_BODY', reason: /JSON/ },
      { name: 'a JSON scalar', headers: json, body: '"hi"', status: 400, code: 'MALFORMED_BODY', reason: /JSON/ },
    ])('$name → $status with a JSON reason', async ({ headers, body, status, code, reason }) => {
      for (const path of [inputs(), '/v1/sessions']) {
        const res = await post(path, { ...auth(), ...headers }, body);
        expect([path, res.status]).toEqual([path, status]);
        expect(res.json).toMatchObject({ statusCode: status, code });
        expect(res.json?.message).toMatch(reason);
      }
    });

    it('a gzip body that is valid JSON is read', async () => {
      const res = await post(inputs(), { ...auth(), ...json, 'content-encoding': 'gzip' }, gzipSync('{"text":"hello from gzip"}'));
      expect(res.status).toBe(202);
    });

    it('an empty body with no content-type creates a session', async () => {
      const res = await send(covel.baseUrl, { method: 'POST', path: '/v1/sessions', headers: auth() });
      expect(res.status).toBe(201);
      const zero = await post('/v1/sessions', auth(), '');
      expect(zero.status).toBe(201);
    });
  });

  describe('item 5: authentication comes before the body', () => {
    it.each([
      ['an oversized body', json, JSON.stringify({ text: 'x'.repeat(300_000) })],
      ['charset=latin1', { 'content-type': 'application/json; charset=latin1' }, '{"text":"hi"}'],
      ['bad gzip', { ...json, 'content-encoding': 'gzip' }, 'garbage'],
      ['content-encoding: compress', { ...json, 'content-encoding': 'compress' }, '{}'],
      ['malformed JSON', json, '{"text":'],
      ['text/plain', { 'content-type': 'text/plain' }, 'hi'],
    ] as const)('%s without a valid key is 401', async (_name, headers, body) => {
      for (const authorization of [undefined, 'Bearer nope', 'Basic abc']) {
        const res = await post(inputs(), { ...headers, ...(authorization ? { authorization } : {}) }, body);
        expect(res.status).toBe(401);
        expect(res.json).toMatchObject({ statusCode: 401, code: expect.stringMatching(/API_KEY/) });
      }
    });

    it('a lying content-length without a key is 401 at once: no body byte is waited for', async () => {
      const res = await send(covel.baseUrl, { method: 'POST', path: inputs(), headers: { ...json, 'content-length': '50000000' }, body: '{', partial: true });
      expect(res.status).toBe(401);
      const small = await send(covel.baseUrl, { method: 'POST', path: inputs(), headers: { ...json, 'content-length': '100' }, body: '{', partial: true });
      expect(small.status).toBe(401);
    });
  });

  it('after all of it nothing was logged as an error, and a normal turn still commits', async () => {
    expectNoStackLogged();
    const { id } = await a.createSession();
    const { executionId } = await a.submit(id, 'Light the lantern');
    await a.waitFor(executionId, 20_000);
    expect((await a.messages(id)).map((m) => m.role)).toEqual(['user', 'assistant']);
  });
});
