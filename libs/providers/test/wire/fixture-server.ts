import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WireFixture } from './fixtures';

/**
 * A loopback HTTP server that answers every request with one golden fixture's bytes (its JSON
 * body, or its events as `text/event-stream`), so an official SDK pointed at it parses exactly
 * what the reference shows. It records each request's path and body.
 */
export class FixtureServer {
  private server: Server | null = null;
  private fixture: WireFixture | null = null;
  readonly requests: { url: string; body: unknown }[] = [];

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        this.requests.push({ url: req.url ?? '', body: raw ? (JSON.parse(raw) as unknown) : null });
        const fixture = this.fixture;
        if (!fixture) {
          res.writeHead(500).end();
          return;
        }
        if (fixture.events) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          for (const e of fixture.events) {
            res.write(`${e.event ? `event: ${e.event}\n` : ''}data: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}\n\n`);
          }
          res.end();
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(fixture.response));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  /** The fixture the next requests are answered with. */
  answer(fixture: WireFixture): void {
    this.fixture = fixture;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}
