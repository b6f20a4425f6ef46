import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A loopback TCP server that accepts every connection and never answers (a provider that hangs):
 * it reads what the client sends and keeps the socket open until the client closes it.
 * `forwardTo` switches it to a plain pass-through to another loopback port (the emulator): a
 * connection is silent or forwarded from its first byte on, so a pooled connection the client
 * opened earlier follows the mode of the moment it carries its first request.
 */
export interface SilentServer {
  url: string;
  port: number;
  /** Connections accepted so far. */
  readonly connections: number;
  /** HTTP requests received so far on silent connections (their request lines). */
  readonly requests: number;
  /** Connections still open. */
  readonly open: number;
  /** Connections carry their first request to this port from now on; null: silent again (forwarded ones are closed). */
  forwardTo(port: number | null): void;
  close(): Promise<void>;
}

const REQUEST_LINE = /(?:^|\r\n)(?:POST|GET|PUT) \S+ HTTP\/1\.[01]\r\n/g;

export async function startSilentServer(): Promise<SilentServer> {
  const sockets = new Set<Socket>();
  const forwarded = new Set<Socket>();
  let accepted = 0;
  let requests = 0;
  let target: number | null = null;
  const server: Server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      sockets.delete(socket);
      forwarded.delete(socket);
    });
    let tail = '';
    const onData = (chunk: Buffer) => {
      if (target !== null && tail === '') {
        socket.off('data', onData);
        forward(socket, chunk, target);
        return;
      }
      // silent: count the request lines, answer nothing, ever
      const text = tail + chunk.toString('latin1');
      requests += text.match(REQUEST_LINE)?.length ?? 0;
      tail = text.slice(-64) || ' ';
    };
    socket.on('data', onData);
  });
  const forward = (socket: Socket, first: Buffer, port: number) => {
    forwarded.add(socket);
    socket.pause();
    const upstream = connect(port, '127.0.0.1');
    upstream.on('error', () => socket.destroy());
    socket.on('close', () => upstream.destroy());
    upstream.on('close', () => socket.destroy());
    upstream.write(first);
    socket.pipe(upstream);
    upstream.pipe(socket);
    socket.resume();
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    get connections() {
      return accepted;
    },
    get requests() {
      return requests;
    },
    get open() {
      return sockets.size;
    },
    forwardTo(next) {
      target = next;
      if (next === null) for (const socket of forwarded) socket.destroy();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
