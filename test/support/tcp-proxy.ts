import { createServer, type Server, type Socket, connect } from 'node:net';

/**
 * A loopback TCP proxy to simulate network outages between the app and a service.
 * - `cut()`: every open connection is reset and new connections are accepted but never forwarded
 *   (a peer that does not answer: the client's connect timeout is what ends them).
 * - `freeze()`: open connections stay open but carry nothing (buffered, delivered on restore);
 *   new connections are held the same way. The client cannot tell it from a slow peer.
 * - `restore()`: forwarding again (held connections are forwarded from then on).
 */
export interface TcpProxy {
  port: number;
  cut(): void;
  freeze(): void;
  restore(): void;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket | null;
  held: Buffer[];
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: 'open' | 'cut' | 'frozen' = 'open';
  const pairs = new Set<Pair>();

  const forward = (pair: Pair) => {
    const upstream = connect(target.port, target.host);
    pair.upstream = upstream;
    upstream.on('error', () => pair.client.destroy());
    upstream.on('close', () => pair.client.destroy());
    for (const chunk of pair.held) upstream.write(chunk);
    pair.held = [];
    upstream.pipe(pair.client);
    pair.client.pipe(upstream);
  };

  const server: Server = createServer((client) => {
    const pair: Pair = { client, upstream: null, held: [] };
    pairs.add(pair);
    client.on('error', () => undefined);
    client.on('close', () => {
      pair.upstream?.destroy();
      pairs.delete(pair);
    });
    if (mode === 'open') {
      forward(pair);
    } else {
      // held: keep what the client sends, answer nothing
      client.on('data', (chunk: Buffer) => {
        if (!pair.upstream) pair.held.push(chunk);
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;

  return {
    port,
    cut() {
      mode = 'cut';
      for (const pair of pairs) {
        pair.client.resetAndDestroy();
        pair.upstream?.destroy();
      }
      pairs.clear();
    },
    freeze() {
      mode = 'frozen';
      for (const pair of pairs) {
        if (!pair.upstream) continue;
        pair.client.unpipe(pair.upstream);
        pair.upstream.unpipe(pair.client);
        pair.client.pause();
        pair.upstream.pause();
      }
    },
    restore() {
      const wasFrozen = mode === 'frozen';
      mode = 'open';
      for (const pair of pairs) {
        if (!pair.upstream) {
          pair.client.removeAllListeners('data');
          forward(pair);
        } else if (wasFrozen) {
          pair.client.pipe(pair.upstream);
          pair.upstream.pipe(pair.client);
          pair.client.resume();
          pair.upstream.resume();
        }
      }
    },
    async close() {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.upstream?.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
