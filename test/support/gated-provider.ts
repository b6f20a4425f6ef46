import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A hold on the next streamed reply: it stops after `afterEvents` events until `release`. */
export interface StreamHold {
  /** Resolves once the held reply has sent its first `afterEvents` events. */
  reached: Promise<void>;
  release(): void;
}

export interface GatedProvider {
  url: string;
  /** The next streamed reply (text/event-stream) pauses after `afterEvents` events. */
  holdNext(afterEvents: number): StreamHold;
  close(): Promise<void>;
}

/**
 * A pass-through in front of a provider (the emulator) that can pause a streamed reply in the
 * middle, for tests that must act while the story is being written (no timing involved).
 */
export async function startGatedProvider(targetUrl: string): Promise<GatedProvider> {
  const holds: { afterEvents: number; reached: () => void; released: Promise<void> }[] = [];
  // a reply cut when the test closes the emulator or this server ends its forward, not the test process
  const server: Server = createServer((req, res) => void forward(req, res).catch(() => res.destroy()));
  async function forward(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers))
      if (typeof value === 'string' && name !== 'host' && name !== 'content-length') headers[name] = value;
    const upstream = await fetch(`${targetUrl}${req.url}`, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
    const type = upstream.headers.get('content-type') ?? 'application/json';
    res.writeHead(upstream.status, { 'content-type': type });
    if (!type.startsWith('text/event-stream') || !upstream.body) {
      res.end(Buffer.from(await upstream.arrayBuffer()));
      return;
    }
    res.flushHeaders();
    const hold = holds.shift();
    let buffered = '';
    let sent = 0;
    const decoder = new TextDecoder();
    for await (const chunk of upstream.body) {
      buffered += decoder.decode(chunk as Uint8Array, { stream: true });
      let end: number;
      while ((end = buffered.indexOf('\n\n')) >= 0) {
        res.write(buffered.slice(0, end + 2));
        buffered = buffered.slice(end + 2);
        if (hold && ++sent === hold.afterEvents) {
          hold.reached();
          await hold.released;
        }
      }
    }
    res.end(buffered);
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    holdNext(afterEvents) {
      let reached!: () => void;
      let release!: () => void;
      const hold = { afterEvents, reached: () => reached(), released: new Promise<void>((r) => (release = r)) };
      const reachedPromise = new Promise<void>((r) => (reached = r));
      holds.push(hold);
      return { reached: reachedPromise, release };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
