import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { loadConfig } from '../../libs/engine';
import { startEmbedded, type EmbeddedEngine } from '../support/embedded';

/** A raw TCP connection to the API: what it received, and when it ended. */
interface Connection {
  socket: Socket;
  /** Everything the server sent so far. */
  received(): string;
  /** Resolves once the server closed the connection (or it broke), with what it sent. */
  closed: Promise<string>;
  isClosed(): boolean;
  /** Bytes written, counted by the client. */
  sent(): number;
  /** Writes and counts; false when the socket is gone or its buffer is full. */
  write(data: string | Buffer): boolean;
}

function open(baseUrl: string): Promise<Connection> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    const chunks: Buffer[] = [];
    let sent = 0;
    let closed = false;
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined); // a reset after the server closed: the test reads `closed`
    const received = () => Buffer.concat(chunks).toString('latin1');
    const whenClosed = new Promise<string>((done) =>
      socket.once('close', () => {
        closed = true;
        done(received());
      }),
    );
    socket.once('connect', () =>
      resolve({
        socket,
        received,
        closed: whenClosed,
        isClosed: () => closed,
        sent: () => sent,
        write(data) {
          if (closed || socket.destroyed) return false;
          sent += Buffer.byteLength(data);
          return socket.write(data);
        },
      }),
    );
    socket.once('error', reject);
  });
}

/** A session of the tenant with this key, made over its own connection (closed after the answer). */
function createSession(baseUrl: string, apiKey: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${baseUrl}/v1/sessions`,
      { method: 'POST', agent: false, headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string }).id));
      },
    );
    req.on('error', reject);
    req.end('{}');
  });
}

/** `promise`, or `fallback` when it has not settled within `ms` (a bound, not a speed assertion). */
const within = <T>(promise: Promise<T>, ms: number, fallback: T) =>
  Promise.race([promise, new Promise<T>((resolve) => setTimeout(() => resolve(fallback), ms).unref())]);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sends one byte of `text` every `everyMs` (10 B/s at 100 ms) until the connection closes or the text ends. */
async function drip(connection: Connection, text: string, everyMs: number) {
  for (const ch of text) {
    if (connection.isClosed()) return;
    connection.write(ch);
    await sleep(everyMs);
  }
}

const FIFTY_MB = 50 * 1024 * 1024;

/** Sends up to `total` bytes of body as fast as the connection takes them, until the server closes it. */
async function flood(connection: Connection, total: number) {
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  let left = total;
  while (left > 0 && !connection.isClosed()) {
    const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
    left -= piece.length;
    if (!connection.write(piece)) {
      await Promise.race([new Promise((resolve) => connection.socket.once('drain', resolve)), connection.closed]);
    }
  }
}

describe('issue 31 item 5: slow or oversized clients are cut off (real sockets, loopback)', () => {
  const settings = {
    COVEL_HTTP_HEADERS_TIMEOUT_MS: '1000',
    COVEL_HTTP_REQUEST_TIMEOUT_MS: '2000',
    COVEL_HTTP_KEEP_ALIVE_TIMEOUT_MS: '500',
    COVEL_HTTP_MAX_CONNECTIONS: '12',
  };
  let covel: EmbeddedEngine;
  let key = '';
  let sessionId = '';
  const opened: Connection[] = [];
  const connection = async () => {
    const c = await open(covel.baseUrl);
    opened.push(c);
    return c;
  };

  beforeAll(async () => {
    covel = await startEmbedded(settings);
    key = (await covel.engine.tenants.create('slow-clients')).apiKey;
    sessionId = await createSession(covel.baseUrl, key);
  }, 120_000);
  afterEach(() => {
    for (const c of opened.splice(0)) c.socket.destroy();
  });
  afterAll(async () => {
    await covel?.stop();
  }, 120_000);

  it('the settings are read with sane defaults, and the headers timeout may not exceed the request timeout', () => {
    expect(loadConfig({}).http).toEqual({ headersTimeoutMs: 20_000, requestTimeoutMs: 120_000, keepAliveTimeoutMs: 5_000, maxConnections: 10_000 });
    expect(() => loadConfig({ COVEL_HTTP_HEADERS_TIMEOUT_MS: '5000', COVEL_HTTP_REQUEST_TIMEOUT_MS: '1000' })).toThrow(/COVEL_HTTP_HEADERS_TIMEOUT_MS/);
  });

  it('a body sent at 10 B/s is cut off after the request timeout: 408, connection closed, most of the body never sent', async () => {
    const c = await connection();
    const body = JSON.stringify({ text: 'x'.repeat(980) });
    c.write(
      `POST /v1/sessions/${sessionId}/inputs HTTP/1.1\r\nHost: covel\r\nAuthorization: Bearer ${key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
    );
    void drip(c, body, 100);
    const received = await within(c.closed, 15_000, null);
    expect(received).not.toBeNull();
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(c.sent()).toBeLessThan(Buffer.byteLength(body));
  }, 30_000);

  it('headers sent at 10 B/s are cut off after the headers timeout: 408, connection closed', async () => {
    const c = await connection();
    c.write('GET /health/live HTTP/1.1\r\nHost: covel\r\n');
    void drip(c, `X-Slow: ${'s'.repeat(300)}\r\n\r\n`, 100);
    const received = await within(c.closed, 15_000, null);
    expect(received).not.toBeNull();
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
  }, 30_000);

  it('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
    const c = await connection();
    c.write('GET /health/live HTTP/1.1\r\nHost: covel\r\n\r\n');
    const received = await within(c.closed, 4_000, null);
    expect(received).toMatch(/^HTTP\/1\.1 200 /);
  }, 30_000);

  it('an event stream outlives the request timeout (it bounds receiving the request, not the answer)', async () => {
    const c = await connection();
    c.write(`GET /v1/sessions/${sessionId}/events HTTP/1.1\r\nHost: covel\r\nAuthorization: Bearer ${key}\r\nAccept: text/event-stream\r\n\r\n`);
    await sleep(2 * 2_000 + 1_000);
    expect(c.isClosed()).toBe(false);
    expect(c.received()).toMatch(/^HTTP\/1\.1 200 /);
    expect(c.received()).toMatch(/content-type: text\/event-stream/i);
  }, 30_000);

  it.each([
    ['401 (no api key)', () => ''],
    ['401 (an unknown api key)', () => 'Authorization: Bearer not-a-key-of-anyone\r\n'],
    ['413 (a declared length over the limit)', () => `Authorization: Bearer ${key}\r\n`],
  ])(
    '%s with 50 MB pending: the answer comes and the connection closes without the body being read',
    async (_name, auth) => {
      const c = await connection();
      c.write(
        `POST /v1/sessions/${sessionId}/inputs HTTP/1.1\r\nHost: covel\r\n${auth()}Content-Type: application/json\r\nContent-Length: ${FIFTY_MB}\r\n\r\n`,
      );
      await flood(c, FIFTY_MB);
      const received = await within(c.closed, 20_000, null);
      expect(received).not.toBeNull();
      expect(received).toMatch(/^HTTP\/1\.1 (401|413) /);
      expect(received).toMatch(/\r\nconnection: close\r\n/i);
      expect(c.sent()).toBeLessThan(FIFTY_MB / 2);
    },
    60_000,
  );

  it('a 400 after the body was read keeps the connection (keep-alive): only unread bodies close it', async () => {
    const c = await connection();
    const request = `POST /v1/sessions/${sessionId}/inputs HTTP/1.1\r\nHost: covel\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 1\r\n\r\n{`;
    c.write(request);
    for (let i = 0; i < 50 && !/\r\n\r\n[\s\S]*\}/.test(c.received()); i++) await sleep(50);
    c.write(request);
    for (let i = 0; i < 50 && (c.received().match(/HTTP\/1\.1 400 /g) ?? []).length < 2; i++) await sleep(50);
    expect(c.received().match(/HTTP\/1\.1 400 /g)).toHaveLength(2);
    expect(c.received()).not.toMatch(/connection: close/i);
  }, 30_000);

  it('connections past the cap are refused as they are accepted; a freed slot is taken again', async () => {
    // 12 event streams hold the 12 connections (answers are not cut by the timeouts), each a tenant's own
    const streams: Connection[] = [];
    for (let i = 0; i < 12; i++) {
      const { apiKey } = await covel.engine.tenants.create(`cap-${i}`);
      const id = await createSession(covel.baseUrl, apiKey);
      streams.push(await connection());
      streams[i].write(`GET /v1/sessions/${id}/events HTTP/1.1\r\nHost: covel\r\nAuthorization: Bearer ${apiKey}\r\nAccept: text/event-stream\r\n\r\n`);
    }
    for (let i = 0; i < 100 && streams.some((s) => !/^HTTP\/1\.1 200 /.test(s.received())); i++) await sleep(50);
    expect(streams.map((s) => s.received().slice(0, 12))).toEqual(streams.map(() => 'HTTP/1.1 200'));
    const extra = await connection();
    extra.write('GET /health/live HTTP/1.1\r\nHost: covel\r\n\r\n');
    expect(await within(extra.closed, 10_000, null)).toBe('');
    streams[0].socket.destroy();
    await streams[0].closed;
    let answered = '';
    for (let i = 0; i < 50 && !answered.startsWith('HTTP/1.1 200'); i++) {
      await sleep(100);
      const again = await connection();
      again.write('GET /health/live HTTP/1.1\r\nHost: covel\r\nConnection: close\r\n\r\n');
      answered = (await within(again.closed, 5_000, '')) ?? '';
    }
    expect(answered).toMatch(/^HTTP\/1\.1 200 /);
  }, 60_000);
});
