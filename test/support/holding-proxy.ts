import { createServer, type Server, type Socket, connect } from 'node:net';

/** A command held back by a `HoldingProxy`: seen when its client sent it, forwarded on `release`. */
export interface HeldCommand {
  /** Resolves once a client has sent a command holding the text (it is held from then on). */
  seen: Promise<void>;
  /** Forwards the held command, and what its connection sent after it. */
  release(): void;
}

/** Which way a hold applies: what a client sends (a command, the default), or what the server sends a client (a reply, a pub/sub message). */
export type HoldDirection = 'from-client' | 'from-server';

/**
 * A loopback TCP proxy in front of a server (Redis) that forwards everything, but can hold a
 * command back: `hold(text)` holds the first chunk a client sends that contains `text` (a key, a
 * channel), and everything that connection sends after it, until `release`. The client cannot tell
 * it from a slow server: the command's reply (an acknowledgement) comes late. Replies and other
 * connections are not held. `hold(text, 'from-server')` holds the first chunk the server sends a
 * client that contains `text` (a pub/sub message), and what it sends that client after it: a slow
 * subscriber connection.
 */
export interface HoldingProxy {
  port: number;
  hold(text: string, direction?: HoldDirection): HeldCommand;
  close(): Promise<void>;
}

interface Hold {
  text: string;
  seen: () => void;
  released: Promise<void>;
}

/** Forwards `from`'s chunks to `to` in order; a chunk matching a hold (taken from `holds`) holds the ones after it. */
function forward(from: Socket, to: Socket, holds: Hold[]): void {
  let sent = Promise.resolve();
  from.on('data', (chunk: Buffer) => {
    const text = chunk.toString('latin1');
    const at = holds.findIndex((h) => text.includes(h.text));
    const hold = at >= 0 ? holds.splice(at, 1)[0] : null;
    hold?.seen();
    sent = sent.then(async () => {
      await hold?.released;
      if (!to.destroyed) to.write(chunk);
    });
  });
}

export async function startHoldingProxy(target: { host: string; port: number }): Promise<HoldingProxy> {
  const holds: Record<HoldDirection, Hold[]> = { 'from-client': [], 'from-server': [] };
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    forward(upstream, client, holds['from-server']);
    forward(client, upstream, holds['from-client']);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    hold(text, direction = 'from-client') {
      let seen!: () => void;
      let release!: () => void;
      const seenPromise = new Promise<void>((resolve) => (seen = resolve));
      holds[direction].push({ text, seen: () => seen(), released: new Promise<void>((resolve) => (release = resolve)) });
      return { seen: seenPromise, release: () => release() };
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
