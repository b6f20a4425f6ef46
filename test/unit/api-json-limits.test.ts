import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { Logger } from '@nestjs/common';
import { ActivationBody, SubmitInputBody } from '../../apps/api/bodies';
import { jsonTextTooDeep, MAX_JSON_DEPTH } from '../../apps/api/json-limits';
import { startEmbedded, type EmbeddedEngine } from '../support/embedded';

interface Answer {
  status: number;
  json: { code?: string; message?: string; issues?: { path: string; message: string }[] } | null;
}

/** One POST with exactly these bytes (fetch would not send bytes that are not UTF-8 as they are). */
function post(baseUrl: string, path: string, headers: Record<string, string>, body: Buffer): Promise<Answer> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path,
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': String(body.length), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          let json: Answer['json'] = null;
          try {
            json = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Answer['json'];
          } catch {
            json = null;
          }
          resolve({ status: res.statusCode ?? 0, json });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** `levels` arrays, one inside the other, around `0`. */
const nested = (levels: number) => `${'['.repeat(levels)}0${']'.repeat(levels)}`;
/** The same as a parsed value (built without recursion). */
const nestedValue = (levels: number): unknown => {
  let value: unknown = 0;
  for (let i = 0; i < levels; i++) value = [value];
  return value;
};

describe('issue 31: deep JSON, bytes that are not UTF-8 and repeated plugin ids are 400s naming the field', () => {
  let covel: EmbeddedEngine;
  let key = '';
  let sessionId = '';
  const logged: string[] = [];
  const spies: jest.SpyInstance[] = [];

  beforeAll(async () => {
    covel = await startEmbedded();
    key = (await covel.engine.tenants.create('json-limits')).apiKey;
    const created = await post(covel.baseUrl, '/v1/sessions', { authorization: `Bearer ${key}` }, Buffer.from('{}'));
    sessionId = (created.json as { id: string }).id;
    for (const level of ['error', 'warn', 'log'] as const) {
      spies.push(jest.spyOn(Logger.prototype, level).mockImplementation((...args: unknown[]) => void logged.push(`${level}: ${args.map(String).join(' ')}`)));
    }
    spies.push(jest.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void logged.push(`console.error: ${args.map(String).join(' ')}`)));
  }, 120_000);
  afterAll(async () => {
    for (const spy of spies) spy.mockRestore();
    await covel?.stop();
  }, 120_000);

  const send = (path: string, body: string | Buffer, headers: Record<string, string> = {}) =>
    post(covel.baseUrl, path, { authorization: `Bearer ${key}`, ...headers }, typeof body === 'string' ? Buffer.from(body, 'utf8') : body);
  const expectNothingLogged = () => expect(logged).toEqual([]);

  describe('item 4: JSON nested deeper than 64 levels', () => {
    it('formValues of 2,000 nested arrays: 400 JSON_TOO_DEEP naming formValues, no stack in the log', async () => {
      const res = await send(`/v1/sessions/${sessionId}/inputs`, `{"text":"hi","formValues":{"a":${nested(2_000)}}}`);
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({
        code: 'JSON_TOO_DEEP',
        issues: [{ path: 'formValues', message: `nests deeper than ${MAX_JSON_DEPTH} levels of arrays and objects` }],
      });
      expectNothingLogged();
    });

    it('an activation payload of 2,000 nested arrays (gzip too): 400 naming payload', async () => {
      const body = `{"pluginId":"p","runtimeId":"r","payload":${nested(2_000)}}`;
      for (const res of [
        await send(`/v1/sessions/${sessionId}/activations`, body),
        await send(`/v1/sessions/${sessionId}/activations`, gzipSync(body), { 'content-encoding': 'gzip' }),
      ]) {
        expect(res.status).toBe(400);
        expect(res.json).toMatchObject({ code: 'JSON_TOO_DEEP', issues: [{ path: 'payload' }] });
      }
      expectNothingLogged();
    });

    it('a body that is itself deeply nested names the body (a world document: its own check, naming the path)', async () => {
      const res = await send(`/v1/sessions/${sessionId}/inputs`, nested(100_000));
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ code: 'JSON_TOO_DEEP', issues: [{ path: '(body)' }] });
      const world = await send('/v1/worlds', `{"name":"deep","entries":[${nested(3_000)}]}`);
      expect(world.status).toBe(400);
      expect(world.json).toMatchObject({ code: 'INVALID_WORLD', issues: [{ path: expect.stringMatching(/^entries(\.0)+$/) }] });
      expectNothingLogged();
    });

    it('64 levels in all are read (the limit is not an off-by-one), brackets inside strings do not count', async () => {
      // the body is level 1, so the payload may nest 63 levels
      const atLimit = await send(`/v1/sessions/${sessionId}/activations`, `{"pluginId":"p","runtimeId":"r","payload":${nested(MAX_JSON_DEPTH - 1)}}`);
      expect(atLimit.json?.code).not.toBe('JSON_TOO_DEEP');
      expect(atLimit.status).not.toBe(500);
      const inText = await send(`/v1/sessions/${sessionId}/activations`, JSON.stringify({ pluginId: 'p', runtimeId: 'r', payload: { s: '['.repeat(5_000) } }));
      expect(inText.json?.code).not.toBe('JSON_TOO_DEEP');
      const overLimit = await send(`/v1/sessions/${sessionId}/activations`, `{"pluginId":"p","runtimeId":"r","payload":${nested(MAX_JSON_DEPTH)}}`);
      expect(overLimit.json).toMatchObject({ code: 'JSON_TOO_DEEP', issues: [{ path: 'payload' }] });
    });

    it('the JSON fields check depth and size before their schema walks the value (no RangeError)', () => {
      const deep = SubmitInputBody.safeParse({ text: 'hi', formValues: { a: nestedValue(5_000) } });
      expect(deep.success).toBe(false);
      expect(deep.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
        ['formValues', `must nest at most ${MAX_JSON_DEPTH} levels of arrays and objects`],
      ]);
      const payload = ActivationBody.safeParse({ pluginId: 'p', runtimeId: 'r', payload: nestedValue(5_000) });
      expect(payload.error?.issues.map((i) => i.path.join('.'))).toEqual(['payload']);
      const large = ActivationBody.safeParse({ pluginId: 'p', runtimeId: 'r', payload: 'x'.repeat(300_000) });
      expect(large.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([['payload', expect.stringMatching(/characters as JSON/)]]);
      expect(ActivationBody.parse({ pluginId: 'p', runtimeId: 'r', payload: nestedValue(MAX_JSON_DEPTH) }).payload).toEqual(nestedValue(MAX_JSON_DEPTH));
    });

    it('the text scan: escaped quotes and member names with odd characters', () => {
      expect(jsonTextTooDeep(`{"a\\"[[[":"]]]","b":${nested(3)}}`, 3)).toEqual({ path: 'b' });
      expect(jsonTextTooDeep(`{"a b":${nested(3)}}`, 3)).toEqual({ path: '(body)' });
      expect(jsonTextTooDeep(`{"a":1,"b":${nested(2)}}`, 3)).toBeNull();
    });
  });

  describe('item 7: bytes that are not UTF-8', () => {
    it.each([
      ['a lone continuation byte', Buffer.from([0x80])],
      ['0xFF', Buffer.from([0xff])],
      ['a truncated 3-byte sequence', Buffer.from([0xe2, 0x82])],
      ['an overlong encoding of "/"', Buffer.from([0xc0, 0xaf])],
      ['an encoded surrogate (CESU-8)', Buffer.from([0xed, 0xa0, 0x80])],
    ])('%s inside a string: 400 MALFORMED_BODY naming the body, nothing stored as U+FFFD', async (_name, bytes) => {
      const body = Buffer.concat([Buffer.from('{"text":"a'), bytes, Buffer.from('b"}')]);
      const res = await send(`/v1/sessions/${sessionId}/inputs`, body);
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ code: 'MALFORMED_BODY', issues: [{ path: '(body)', message: expect.stringMatching(/UTF-8/) }] });
    });

    it('the world routes (their own parser) and gzip bodies too', async () => {
      const world = await send('/v1/worlds', Buffer.concat([Buffer.from('{"name":"x'), Buffer.from([0xff]), Buffer.from('"}')]));
      expect(world).toMatchObject({ status: 400, json: { code: 'MALFORMED_BODY', issues: [{ path: '(body)' }] } });
      const zipped = gzipSync(Buffer.concat([Buffer.from('{"text":"a'), Buffer.from([0xfe]), Buffer.from('"}')]));
      const res = await send(`/v1/sessions/${sessionId}/inputs`, zipped, { 'content-encoding': 'gzip' });
      expect(res).toMatchObject({ status: 400, json: { code: 'MALFORMED_BODY' } });
      expectNothingLogged();
    });

    it('well-formed UTF-8 (emoji, CJK, a BOM-less body) still reads', async () => {
      const res = await send('/v1/sessions', JSON.stringify({ locale: 'zh-Hans', pluginSettings: { 'x-🐉': { 名: '龍 🐉' } } }));
      // the settings name an unknown plugin: a 400 from the engine's check, not from the bytes
      expect(res.json?.code).not.toBe('MALFORMED_BODY');
    });
  });

  describe('item 7: a plugin id listed twice', () => {
    it('POST /v1/sessions plugins: 400 naming plugins', async () => {
      const res = await send('/v1/sessions', JSON.stringify({ plugins: ['narrator', 'memory', 'narrator'] }));
      expect(res.status).toBe(400);
      expect(res.json?.issues).toEqual([{ path: 'plugins', message: 'must name each plugin once ("narrator" is listed twice)' }]);
    });

    it('POST /v1/worlds/generate plugins and a world document’s plugins: 400 naming plugins', async () => {
      const generate = await send('/v1/worlds/generate', JSON.stringify({ description: 'x', locale: 'en', plugins: ['narrator', 'narrator'] }));
      expect(generate.status).toBe(400);
      expect(generate.json?.issues?.map((i) => i.path)).toEqual(['plugins']);
      const world = await send('/v1/worlds', JSON.stringify({ name: 'Twice', plugins: ['narrator', 'narrator'] }));
      expect(world.status).toBe(400);
      expect(world.json?.issues?.map((i) => i.path)).toEqual(['plugins']);
    });

    it('each id once is still accepted', async () => {
      const res = await send('/v1/sessions', JSON.stringify({ plugins: ['narrator'] }));
      expect(res.status).toBe(201);
    });
  });
});
