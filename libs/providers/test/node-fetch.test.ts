import { createServer as createHttpServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { createServer as createTcpServer, type Socket } from 'node:net';
import { constants, gzipSync } from 'node:zlib';
import { observeProviderFetches, providerFetch, requestHead } from '../node-fetch';

/**
 * A TCP server that keeps the bytes of each request it reads (one read each: small requests) and answers with `answer`;
 * `closed` has, for each request it read, a promise of the closing of the connection it came on.
 */
async function rawServer(
  answer: (socket: Socket, request: string) => void,
): Promise<{ url: string; requests: string[]; closed: Promise<void>[]; close: () => Promise<void> }> {
  const requests: string[] = [];
  const closed: Promise<void>[] = [];
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    sockets.add(socket);
    const closing = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => undefined); // a client that closes the connection before the answer's end (the tests of that)
    socket.on('data', (data) => {
      requests.push(data.toString('latin1'));
      closed.push(closing);
      answer(socket, data.toString('latin1'));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    closed,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const OK = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}';

/** A request's head lines (request line first, then its header lines, sorted) and its body. */
function parts(request: string): { line: string; fields: string[]; body: string } {
  const [head, body] = request.split('\r\n\r\n') as [string, string];
  const [line, ...fields] = head.split('\r\n');
  return { line: line!, fields: fields.map((f) => f.replace(/^host: .*/, 'host: <port>')).sort(), body };
}

describe('providerFetch: the wire bytes undici sends', () => {
  let server: Awaited<ReturnType<typeof rawServer>>;
  beforeAll(async () => (server = await rawServer((socket) => socket.write(OK))));
  afterAll(() => server.close());

  async function both(path: string, init: () => RequestInit): Promise<[string, string]> {
    await (await globalThis.fetch(`${server.url}${path}`, init())).text();
    await (await providerFetch(`${server.url}${path}`, init())).text();
    const [undici, ours] = server.requests.slice(-2) as [string, string];
    return [undici, ours];
  }

  it('a request without fields of its own: byte for byte (GET, a text body, a binary body)', async () => {
    for (const init of [() => ({}), () => ({ method: 'POST', body: '{"é":"ü 🙂"}' }), () => ({ method: 'put', body: new Uint8Array([0, 255, 10]) })]) {
      const [undici, ours] = await both('/v1/x?q=1', init);
      expect(ours).toBe(undici);
    }
  });

  it("the OpenAI SDK's requests (its Headers, lower-case names; a JSON body): the same request line, header fields and body; only the fields' order may differ", async () => {
    const { OpenAI } = await import('openai');
    const sent = async (viaProviderFetch: boolean): Promise<string> => {
      const fetch = viaProviderFetch ? { fetch: providerFetch } : {};
      const openai = new OpenAI({ apiKey: 'k', baseURL: `${server.url}/v1`, maxRetries: 0, ...fetch });
      await openai.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'naïve 🙂' }], stream: true }).asResponse();
      return server.requests.at(-1)!;
    };
    const undici = await sent(false);
    const ours = await sent(true);
    expect(parts(ours)).toEqual(parts(undici));
    expect(parts(ours).fields).toContain('accept-encoding: gzip, deflate');
  });

  it("over https too, the same fields as undici's (its accept-encoding there offers br)", async () => {
    // undici's fields as it hands them to its dispatcher (a stand-in here: no TLS server needed), before host and connection
    let dispatched: Record<string, string> = {};
    const dispatcher = {
      dispatch(options: { headers: Record<string, string> }, handler: { onError: (error: Error) => void }) {
        dispatched = options.headers;
        queueMicrotask(() => handler.onError(new Error('not sent')));
        return true;
      },
    };
    for (const url of ['https://api.example.com/v1/x', 'http://api.example.com/v1/x']) {
      const init = (): RequestInit => ({ method: 'POST', body: '{"a":1}', headers: { 'x-b': '1', authorization: 'Bearer k' } });
      await expect(globalThis.fetch(url, { ...init(), dispatcher } as RequestInit)).rejects.toThrow('fetch failed');
      const undici = Object.entries(dispatched).map(([name, value]) => `${name.toLowerCase()}: ${value}`);
      const { raw } = requestHead(new URL(url), init(), '{"a":1}');
      const ours = raw.flatMap((name, i) => (i % 2 === 0 ? [`${name}: ${raw[i + 1]}`] : []));
      expect(ours.slice(0, 2)).toEqual(['host: api.example.com', 'connection: keep-alive']);
      expect(ours.slice(2).sort()).toEqual(undici.sort());
    }
    expect(dispatched['accept-encoding']).toBe('gzip, deflate');
    expect(requestHead(new URL('https://a.example'), {}, null).raw).toContain('br, gzip, deflate');
  });
});

/** Whether `promise` settles within `ms`. */
async function within(ms: number, promise: Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  return Promise.race([promise.then(() => true), late]).finally(() => clearTimeout(timer));
}

/** The gzip of `text` flushed but not ended: the start of a gzipped body that goes on. */
const gzipStart = (text: string): Buffer => gzipSync(text, { finishFlush: constants.Z_SYNC_FLUSH });

describe('providerFetch: a malformed answer, a body not read to its end', () => {
  let answer: string | Buffer = OK;
  let server: Awaited<ReturnType<typeof rawServer>>;
  beforeAll(async () => (server = await rawServer((socket) => socket.write(answer))));
  afterAll(() => server.close());

  /** What `fetch` does with `answer`: its status and text, or the name, message and cause of what it rejects with (or nothing in 5 s). */
  async function outcome(fetch: typeof globalThis.fetch): Promise<string> {
    const settled = (async () => {
      try {
        const response = await fetch(`${server.url}/m`);
        return `${response.status} ${await response.text()}`;
      } catch (error) {
        const { name, message, cause } = error as TypeError;
        return `${name}: ${message} (${(cause as Error | undefined)?.name})`;
      }
    })();
    return (await within(5_000, settled)) ? settled : 'no outcome in 5 s';
  }

  it("rejects with TypeError('fetch failed'), not a crash, as undici does: a redirect to no URL, a status a Response cannot have, a switch of protocols not asked for", async () => {
    answer = 'HTTP/1.1 302 Found\r\nlocation: http://[bad\r\ncontent-length: 0\r\n\r\n';
    expect(await outcome(providerFetch)).toBe(await outcome(globalThis.fetch));
    expect(await outcome(providerFetch)).toBe('TypeError: fetch failed (TypeError)');
    // undici hands over a status of 600-999 (a Response made by JS cannot have one): a malformed answer here
    answer = 'HTTP/1.1 999 Odd\r\ncontent-length: 2\r\n\r\nok';
    expect(await outcome(providerFetch)).toBe('TypeError: fetch failed (RangeError)');
    // a switch of protocols no one asked for
    answer = 'HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n';
    expect(await outcome(globalThis.fetch)).toMatch(/^TypeError: fetch failed /);
    expect(await outcome(providerFetch)).toBe('TypeError: fetch failed (Error)');
    answer = OK;
    expect(await outcome(providerFetch)).toBe('200 {}'); // and the next request is answered
  });

  it('a body in a coding undici does not undo (a gzip under another): as it came, as undici gives it, with no decoder left failing on it', async () => {
    answer = 'HTTP/1.1 200 OK\r\ncontent-encoding: foo, gzip\r\ncontent-length: 2\r\n\r\nok';
    const failures: unknown[] = [];
    const failed = (error: unknown) => failures.push(error);
    process.on('uncaughtException', failed);
    try {
      expect(await outcome(providerFetch)).toBe(await outcome(globalThis.fetch));
      expect(await outcome(providerFetch)).toBe('200 ok');
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      process.off('uncaughtException', failed);
    }
    expect(failures).toEqual([]);
  });

  it('a cancelled gzip body closes its socket (the SDK cancels the bodies of the answers it retries), whether all of it was sent or more was to come', async () => {
    // larger than what the decoders and the socket buffer: the answer is not all read when the body is cancelled
    const zipped = gzipSync(JSON.stringify({ error: { message: randomBytes(300_000).toString('base64') } }));
    const whole = Buffer.concat([Buffer.from(`HTTP/1.1 429 Too Many Requests\r\ncontent-encoding: gzip\r\ncontent-length: ${zipped.length}\r\n\r\n`), zipped]);
    const started = Buffer.concat([Buffer.from('HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: 1000\r\n\r\n'), gzipStart('data: 1\n\n')]);
    for (const [bytes, read] of [
      [whole, false],
      [started, true],
    ] as const) {
      answer = bytes;
      const response = await providerFetch(`${server.url}/c`, { method: 'POST', body: '{}' });
      const reader = response.body!.getReader();
      if (read) expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: 1\n\n');
      await reader.cancel();
      expect(await within(1_000, server.closed.at(-1)!)).toBe(true);
    }
  });

  it("a body that is not the gzip it says errors its stream with TypeError('terminated') and closes its socket", async () => {
    answer = 'HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: 100\r\n\r\nthis is not gzip at all';
    const response = await providerFetch(`${server.url}/g`, { method: 'POST', body: '{}' });
    await expect(response.text()).rejects.toMatchObject({ name: 'TypeError', message: 'terminated', cause: { code: 'Z_DATA_ERROR' } });
    expect(await within(1_000, server.closed.at(-1)!)).toBe(true);
  });

  it('gzip bodies read to their end leave the connection open for the next request (keep-alive)', async () => {
    const zipped = gzipSync('{"a":"ü"}');
    answer = Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: ${zipped.length}\r\n\r\n`), zipped]);
    for (let i = 0; i < 3; i++) expect(await (await providerFetch(`${server.url}/k`)).json()).toEqual({ a: 'ü' });
    expect(new Set(server.closed.slice(-3)).size).toBe(1);
  });
});

describe('providerFetch: the answer as undici gives it', () => {
  let server: Server;
  let url: string;
  /** What the test's next request answers. */
  let handle: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void = () => undefined;
  beforeAll(async () => {
    server = createHttpServer((req, res) => handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('status, status text, header fields (repeated ones too), the body, and the url', async () => {
    handle = (_req, res) => {
      res.writeHead(429, 'Slow Down', [
        ['x-request-id', 'r1'],
        ['set-cookie', 'a=1'],
        ['set-cookie', 'b=2'],
        ['content-type', 'application/json'],
      ]);
      res.end('{"error":{"message":"busy"}}');
    };
    const response = await providerFetch(`${url}/v1/y`, { method: 'POST', body: '{}' });
    expect([response.status, response.statusText, response.ok, response.url]).toEqual([429, 'Slow Down', false, `${url}/v1/y`]);
    expect(response.headers.get('x-request-id')).toBe('r1');
    expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await response.json()).toEqual({ error: { message: 'busy' } });
  });

  it('a gzip body is decoded (the content-encoding field stays), a 204 has none', async () => {
    handle = (_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'text/event-stream' });
      res.end(gzipSync('data: {"a":"ü"}\n\n'));
    };
    const zipped = await providerFetch(`${url}/z`);
    expect(zipped.headers.get('content-encoding')).toBe('gzip');
    expect(await zipped.text()).toBe('data: {"a":"ü"}\n\n');
    handle = (_req, res) => res.writeHead(204).end();
    const empty = await providerFetch(`${url}/e`, { method: 'DELETE' });
    expect([empty.status, empty.body]).toEqual([204, null]);
  });

  it('a streamed body comes a write at a time, before the answer ends', async () => {
    let finish: () => void = () => undefined;
    handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: 1\n\n');
      finish = () => res.end('data: 2\n\n');
    };
    const response = await providerFetch(`${url}/s`, { method: 'POST', body: '{}' });
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: 1\n\n');
    finish();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: 2\n\n');
    expect((await reader.read()).done).toBe(true);
  });

  it('a body cut short errors its stream with TypeError("terminated"); a refused connection rejects with TypeError("fetch failed")', async () => {
    handle = (_req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('partial');
      setTimeout(() => res.socket?.destroy(), 20);
    };
    const both = [globalThis.fetch, providerFetch] as const;
    for (const f of both) {
      const response = await f(`${url}/cut`);
      await expect(response.text()).rejects.toMatchObject({ name: 'TypeError', message: 'terminated' });
    }
    const closed = createHttpServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const gone = `http://127.0.0.1:${(closed.address() as { port: number }).port}/`;
    await new Promise((resolve) => closed.close(resolve));
    for (const f of both) await expect(f(gone)).rejects.toMatchObject({ name: 'TypeError', message: 'fetch failed' });
  });

  it("an abort rejects with the signal's reason, before the answer and while its body is read", async () => {
    handle = (_req, res) => {
      res.writeHead(200);
      res.write('x');
    };
    const early = new AbortController();
    early.abort();
    await expect(providerFetch(`${url}/a`, { signal: early.signal })).rejects.toBe(early.signal.reason);
    const waiting = new AbortController();
    handle = () => undefined; // never answers
    const pending = providerFetch(`${url}/a`, { signal: waiting.signal });
    setTimeout(() => waiting.abort(), 20);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    handle = (_req, res) => {
      res.writeHead(200);
      res.write('x');
    };
    const reading = new AbortController();
    const response = await providerFetch(`${url}/a`, { signal: reading.signal });
    const reader = response.body!.getReader();
    await reader.read();
    reading.abort();
    await expect(reader.read()).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('a redirect is followed (a 307 keeps the method and body), and each request sent is told to the observers', async () => {
    const seen: string[] = [];
    const stop = observeProviderFetches((u) => seen.push(u.pathname));
    handle = (req, res) => {
      if (req.url === '/old') return void res.writeHead(307, { location: '/new' }).end();
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => res.writeHead(200).end(`${req.method} ${req.url} ${body}`));
    };
    try {
      const response = await providerFetch(`${url}/old`, { method: 'POST', body: 'b' });
      expect(await response.text()).toBe('POST /new b');
      expect(seen).toEqual(['/old']); // the redirect's request goes through globalThis.fetch
    } finally {
      stop();
    }
  });
});
