import { createServer, type Server, type Socket } from 'node:net';
import { Client, DatabaseError, Pool } from 'pg';
import { UnavailableError } from '../../errors';
import { ConcurrencyError } from '../errors';
import { databaseUnavailable, isDatabaseUnavailable } from '../unavailable';

/** A loopback server that accepts and then does `onSocket` (hold forever, or hang up at once). */
async function fakeServer(onSocket: (socket: Socket) => void): Promise<{ port: number; server: Server; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    onSocket(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, server, sockets };
}

async function closeServer(s: { server: Server; sockets: Set<Socket> }) {
  for (const socket of s.sockets) socket.destroy();
  await new Promise<void>((resolve) => s.server.close(() => resolve()));
}

async function failureOf(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

function sqlState(code: string): DatabaseError {
  const error = new DatabaseError(`server said ${code}`, 0, 'error');
  error.code = code;
  return error;
}

describe('databaseUnavailable: connection-level database failures become UnavailableError', () => {
  it('a refused connection (real pg client, closed port)', async () => {
    const s = await fakeServer(() => undefined);
    const port = s.port;
    await closeServer(s);
    const client = new Client({ host: '127.0.0.1', port, user: 'x', database: 'x' });
    const error = await failureOf(() => client.connect());
    const classified = databaseUnavailable(error);
    expect(classified).toBeInstanceOf(UnavailableError);
    expect(classified).toMatchObject({ dependency: 'database', code: 'DATABASE_UNAVAILABLE', category: 'unavailable', retryAfterSeconds: 2 });
    expect(classified!.cause).toBe(error);
  });

  it('a server that never answers: the pool connect timeout and the pending-checkout timeout', async () => {
    const s = await fakeServer(() => undefined); // accepts, never speaks
    const pool = new Pool({ host: '127.0.0.1', port: s.port, user: 'x', database: 'x', max: 1, connectionTimeoutMillis: 200 });
    pool.on('error', () => undefined);
    try {
      const [first, second] = await Promise.all([failureOf(() => pool.query('select 1')), failureOf(() => pool.query('select 1'))]);
      const messages = [first, second].map((e) => (e as Error).message).sort();
      expect(messages).toEqual(['Connection terminated due to connection timeout', 'timeout exceeded when trying to connect']);
      expect(isDatabaseUnavailable(first)).toBe(true);
      expect(isDatabaseUnavailable(second)).toBe(true);
    } finally {
      await pool.end();
      await closeServer(s);
    }
  });

  it('a connection the server hangs up on', async () => {
    const s = await fakeServer((socket) => socket.destroy());
    const client = new Client({ host: '127.0.0.1', port: s.port, user: 'x', database: 'x' });
    client.on('error', () => undefined);
    try {
      const error = await failureOf(() => client.connect());
      expect(isDatabaseUnavailable(error)).toBe(true);
    } finally {
      await closeServer(s);
    }
  });

  it.each(['08000', '08003', '08006', '08001', '57P01', '57P02', '57P03', '53300'])('SQLSTATE %s', (code) => {
    expect(isDatabaseUnavailable(sqlState(code))).toBe(true);
  });

  it('node socket error codes, a nested cause and an AggregateError', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT']) {
      expect(isDatabaseUnavailable(Object.assign(new Error(`connect ${code}`), { code }))).toBe(true);
    }
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(isDatabaseUnavailable(new Error('query failed', { cause: refused }))).toBe(true);
    expect(isDatabaseUnavailable(new AggregateError([refused], 'connect failed'))).toBe(true);
    expect(isDatabaseUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
  });

  it('an UnavailableError passes through unchanged', () => {
    const error = new UnavailableError('database', 'down');
    expect(databaseUnavailable(error)).toBe(error);
  });

  it('everything else is not an outage', () => {
    for (const code of ['23505', '22P02', '42P01', '40001', '57014', 'P0001']) expect(databaseUnavailable(sqlState(code))).toBeNull();
    expect(databaseUnavailable(new Error('boom'))).toBeNull();
    expect(databaseUnavailable(new ConcurrencyError('s', 1, 2))).toBeNull();
    expect(databaseUnavailable('a string')).toBeNull();
    expect(databaseUnavailable(null)).toBeNull();
    expect(databaseUnavailable(undefined)).toBeNull();
  });
});
