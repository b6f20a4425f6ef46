import { type AddressInfo, connect } from 'node:net';
import { request, type Server } from 'node:http';
import express, { json, type NextFunction, type Request, type Response } from 'express';
import { EngineError } from '../../libs/errors';
import { SubmitInputBody, TextInputBody } from '../../apps/api/bodies';
import { bodyErrorsAsEngineErrors, isAcceptedJsonBody, jsonBodyGate, readPlainJsonBody, verifyJsonBody } from '../../apps/api/request-gate';
import { ZodBodyPipe } from '../../apps/api/zod-body.pipe';

/**
 * The usual JSON body is read by the API itself (readPlainJsonBody, issue 33: CPU per request): each
 * body below gets the same answer as body-parser gives it (the parsed body, or the same error), on an
 * app where body-parser is not there for it to fall back to.
 */
describe('readPlainJsonBody: the same answers as the JSON parser', () => {
  const LIMIT = 4_096;
  const answer = (req: Request, res: Response) => void res.json({ body: (req as { body?: unknown }).body ?? null });
  const errors = (error: unknown, _req: Request, res: Response, _next: NextFunction) =>
    void res
      .status(400)
      .json(error instanceof EngineError ? { code: error.code, message: error.message, issues: error.issues ?? null } : { other: String(error) });
  const gate = jsonBodyGate({ limitBytes: LIMIT });
  /** body-parser only, as the API read every body before. */
  const parserApp = express()
    .use(gate)
    .use(json({ limit: LIMIT, type: isAcceptedJsonBody, verify: verifyJsonBody }))
    .use(bodyErrorsAsEngineErrors)
    .post('/', answer)
    .use(errors);
  /** The plain reader alone: a body it does not read stays unread (no parser after it). */
  const readerApp = express()
    .use(gate)
    .use(readPlainJsonBody({ limitBytes: LIMIT }))
    .use(bodyErrorsAsEngineErrors)
    .post('/', answer)
    .use(errors);
  const servers: Server[] = [];
  const urls: string[] = [];

  beforeAll(async () => {
    for (const app of [parserApp, readerApp]) {
      const server = app.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      servers.push(server);
      urls.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    }
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  });

  const post = (url: string, body: Buffer, contentType: string) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(url, { method: 'POST', headers: { 'content-type': contentType, 'content-length': body.length } }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      });
      req.on('error', reject);
      req.end(body);
    });

  it.each([
    ['an object', '{"text":"hello"}'],
    ['an array', '[1, 2, {"a": null}]'],
    ['whitespace first', ' \t\r\n {"text":"hi"}'],
    ['a BOM first', '\uFEFF{"text":"hi"}'],
    ['non-ASCII text', '{"text":"café — 🐉"}'],
    ['a scalar', '"hi"'],
    ['whitespace then a scalar', '  42'],
    ['null', 'null'],
    ['malformed JSON', '{"text":'],
    ['trailing garbage', '{"text":"hi"} x'],
    ['only whitespace', '   '],
    ['65 levels', '{"a":' + '['.repeat(64) + ']'.repeat(64) + '}'],
    ['64 levels', '{"a":' + '['.repeat(63) + ']'.repeat(63) + '}'],
  ])('%s', async (_name, text) => {
    for (const type of ['application/json', 'application/json; charset=utf-8']) {
      const [parsed, read] = await Promise.all(urls.map((url) => post(url, Buffer.from(text, 'utf8'), type)));
      expect(read).toEqual(parsed);
    }
  });

  it('bytes that are not UTF-8, and a lone surrogate encoded: the same 400', async () => {
    for (const bytes of [Buffer.from([0x7b, 0x22, 0x74, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]), Buffer.from('{"t":"\xed\xa0\x80"}', 'latin1')]) {
      const [parsed, read] = await Promise.all(urls.map((url) => post(url, bytes, 'application/json')));
      expect(read.status).toBe(400);
      expect(read).toEqual(parsed);
    }
  });

  it('another JSON type is left to the parser', async () => {
    const read = await post(urls[1], Buffer.from('{"text":"hi"}'), 'application/vnd.api+json');
    expect(JSON.parse(read.text)).toEqual({ body: null });
    const parsed = await post(urls[0], Buffer.from('{"text":"hi"}'), 'application/vnd.api+json');
    expect(JSON.parse(parsed.text)).toEqual({ body: { text: 'hi' } });
  });
});

describe('POST inputs: TextInputBody first, the same answers as SubmitInputBody alone', () => {
  const alone = new ZodBodyPipe(SubmitInputBody);
  const usualFirst = new ZodBodyPipe(SubmitInputBody, '(body)', { usual: TextInputBody });
  const outcome = (pipe: ZodBodyPipe<unknown>, value: unknown) => {
    try {
      return { ok: pipe.transform(value) };
    } catch (error) {
      return { error: error instanceof EngineError ? { code: error.code, issues: error.issues } : String(error) };
    }
  };

  const values: unknown[] = [
    { text: 'hi' },
    { text: '  padded  ', midTurn: true },
    { text: 'a', midTurn: false },
    { text: '' },
    { text: '\u200b' },
    { text: 'a\u0000' },
    { text: '\ud800' },
    { text: '😀'.repeat(16_000) },
    { text: '😀'.repeat(16_001) },
    { text: 5 },
    { text: 'x', midTurn: 'yes' },
    { text: 'x', extra: 1 },
    { text: 'x', formValues: { a: 1 } },
    { text: 'x', formValues: { a: 1 }, midTurn: true },
    { text: 'x', formValues: 'no' },
    {},
    [],
    null,
    'text',
  ];
  it.each(values.map((value) => [JSON.stringify(value).slice(0, 60), value]))('%s', (_shown, value) => {
    expect(outcome(usualFirst, value)).toEqual(outcome(alone, value));
  });
});

/**
 * A client that goes away while an earlier step waits (the key's lookup) has had its `aborted` and
 * `close` already: the reader answers BODY_INCOMPLETE at once instead of waiting for events that
 * have fired (the request's chain would never finish).
 */
describe('readPlainJsonBody: a client gone before the reader runs', () => {
  it('a request whose client went away during an earlier wait ends its chain with BODY_INCOMPLETE', async () => {
    let seen: (code: string) => void = () => undefined;
    const ended = new Promise<string>((resolve) => (seen = resolve));
    const app = express()
      .use(jsonBodyGate({ limitBytes: 4_096 }))
      // the earlier step: it goes on only once the client has gone away
      .use((req: Request, _res: Response, next: NextFunction) => void req.once('close', () => setImmediate(next)))
      .use(readPlainJsonBody({ limitBytes: 4_096 }))
      .post('/', (_req: Request, res: Response) => {
        seen('next');
        res.end();
      })
      .use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
        seen(error instanceof EngineError ? error.code : String(error));
        res.end();
      });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const socket = connect(port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write('POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 10\r\n\r\n{"te');
      await new Promise((resolve) => setTimeout(resolve, 50));
      socket.destroy();
      expect(await ended).toBe('BODY_INCOMPLETE');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
