import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { observeProviderFetches, providerFetch } from '../node-fetch';

/** A TCP server that keeps the bytes of each request it reads (one read each: small requests) and answers with `answer`. */
async function rawServer(answer: (socket: Socket, request: string) => void): Promise<{ url: string; requests: string[]; close: () => Promise<void> }> {
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('data', (data) => {
      requests.push(data.toString('latin1'));
      answer(socket, data.toString('latin1'));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
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
