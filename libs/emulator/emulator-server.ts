import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicRoute } from './anthropic-route';
import { geminiRoute } from './gemini-route';
import { openAIChatRoute } from './openai-chat-route';
import { openAIResponsesRoute } from './openai-responses-route';
import { AutomaticPrefixCache, OPENAI_PREFIX_CACHE, BreakpointCache } from './prefix-cache';
import { emulatedReply, type Reply, type ReplyInput } from './reply';
import type { EmulatedCall, EmulatorReply, EmulatorRoute, EmulatorState } from './route';

export interface EmulatorOptions {
  /** Loopback only; defaults to 127.0.0.1. */
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Anthropic minimum cacheable prompt per model (default 1024; the fact sheet lists 512–4096). */
  anthropicMinCacheTokens?: (model: string) => number;
  /** Gemini implicit-cache minimum (default 1024; it differs between versions of Google's page). */
  geminiMinCacheTokens?: number;
  /** Delay before answering, and between streamed events (ms). */
  responseDelayMs?: number;
  chunkDelayMs?: number;
  /**
   * Scripted replies (the plugin contract-test harness): asked first for every model call; a reply
   * it returns is answered in the protocol's shape, `undefined` leaves the call to the emulator's
   * own deterministic reply. Without a script the emulator behaves as before.
   */
  script?: EmulatorScript;
  /**
   * Awaited before each model call is answered (after it is recorded in `requests`): a test does
   * what must happen while that call is in flight (e.g. posts a player message), then the call is
   * answered. Its rejection fails the call with a 500.
   */
  beforeReply?: (request: RecordedRequest) => Promise<void>;
}

/** A call as a script sees it: the emulator's reading of the request, and which call it is. */
export type ScriptedCall = ReplyInput & EmulatedCall;
export type EmulatorScript = (call: ScriptedCall) => Reply | undefined;

/** An error the emulator answers instead of the next `times` requests (for retry and failure tests). */
export interface EmulatorFault {
  status: number;
  times: number;
  message?: string;
}

/**
 * What the emulator does to streamed requests (`setStreamingFault`), for the non-streaming
 * fallback: `refuse` answers the provider's 400 refusing streaming (a model, an account or a
 * compatible endpoint that does not stream); `break` opens the stream (200, text/event-stream) and
 * drops the connection after `afterEvents` events (default 0: before any; a stream with no more
 * events than that is answered whole). `times`: how many streamed requests it refuses or breaks
 * (default: every one until cleared). Requests without streaming are answered as usual.
 */
export type StreamingFault = ({ kind: 'refuse' } | { kind: 'break'; afterEvents?: number }) & { times?: number };

export interface RecordedRequest {
  path: string;
  body: unknown;
  /** The request body exactly as received. */
  raw: string;
  /**
   * Set when the client closed the connection before the reply ended (an aborted call): how many of
   * a streamed reply's events had been written then, of how many (0 of 0: a reply not begun or not streamed).
   */
  clientClosed?: { eventsSent: number; events: number };
}

/**
 * The offline provider emulator: a loopback HTTP server answering the real wire formats with
 * deterministic story text, so the official SDKs run unchanged against it.
 */
export class ProviderEmulator {
  private server: Server | null = null;
  private readonly routes: EmulatorRoute[] = [openAIChatRoute, openAIResponsesRoute, anthropicRoute, geminiRoute];
  private readonly state: EmulatorState;
  readonly requests: RecordedRequest[] = [];
  private faults: EmulatorFault[] = [];
  private streamingFault: StreamingFault | null = null;
  /** How far each reply got: `recorded.clientClosed` when the client goes away before its end (not when the emulator drops it). */
  private readonly progress = new WeakMap<ServerResponse, { sent: number; events: number; droppedHere: boolean }>();

  constructor(private readonly options: EmulatorOptions = {}) {
    this.state = {
      openAICache: new AutomaticPrefixCache(OPENAI_PREFIX_CACHE),
      geminiCache: new AutomaticPrefixCache({ minTokens: options.geminiMinCacheTokens ?? 1024, stepTokens: 1 }),
      anthropicCache: new BreakpointCache(options.anthropicMinCacheTokens ?? (() => 1024)),
    };
  }

  /** Base URL for the Anthropic SDK. */
  get anthropicBaseURL(): string {
    return this.url;
  }

  /** Base URL for @google/genai. */
  get geminiBaseURL(): string {
    return this.url;
  }

  get url(): string {
    if (!this.server) throw new Error('emulator is not started');
    const { port } = this.server.address() as AddressInfo;
    return `http://${this.options.host ?? '127.0.0.1'}:${port}`;
  }

  /** Base URL for the OpenAI SDK. */
  get openAIBaseURL(): string {
    return `${this.url}/v1`;
  }

  /** The next `times` requests get this HTTP error in the provider's error shape. */
  injectFault(fault: EmulatorFault): void {
    this.faults.push({ ...fault });
  }

  /** Streamed requests meet this fault from now on (null: streaming works again). */
  setStreamingFault(fault: StreamingFault | null): void {
    this.streamingFault = fault ? { ...fault } : null;
  }

  async start(): Promise<this> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((error) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: String(error), type: 'server_error' } }));
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port ?? 0, this.options.host ?? '127.0.0.1', () => resolve());
    });
    this.server = server;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const path = (req.url ?? '/').split('?')[0];
    let match: RegExpExecArray | null = null;
    const route = this.routes.find((r) => r.method === req.method && (match = r.path.exec(path)) !== null);
    if (!route) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${path}`, type: 'not_found' } }));
      return;
    }
    const raw = await readBody(req);
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'body is not JSON', type: 'invalid_request_error' } }));
      return;
    }
    const recorded: RecordedRequest = { path, body, raw };
    this.requests.push(recorded);
    this.watchClose(res, recorded);
    await sleep(this.options.responseDelayMs ?? 0);
    if (this.options.beforeReply) {
      try {
        await this.options.beforeReply({ path, body, raw });
      } catch (error) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `beforeReply failed: ${error instanceof Error ? error.message : String(error)}`, type: 'server_error' } }));
        return;
      }
    }
    const fault = this.faults[0];
    if (fault) {
      if (--fault.times <= 0) this.faults.shift();
      res.writeHead(fault.status, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: { message: fault.message ?? `emulated ${fault.status}`, type: fault.status >= 500 ? 'server_error' : 'invalid_request_error' },
        }),
      );
      return;
    }
    const streaming = this.streamingFault && route.streams(body, match!) ? this.streamingFault : null;
    if (streaming?.kind === 'refuse') {
      this.spendStreamingFault();
      return this.write(res, route.refuseStreaming());
    }
    const reply = (input: ReplyInput, call: EmulatedCall) => this.options.script?.({ ...input, ...call }) ?? emulatedReply(input);
    const answer = route.handle(body, { state: this.state, match: match!, headers: req.headers, reply });
    // a break takes effect only on a stream longer than the events it lets through
    const breakAfter =
      streaming?.kind === 'break' && answer.kind === 'sse' && answer.events.length > (streaming.afterEvents ?? 0) ? (streaming.afterEvents ?? 0) : undefined;
    if (breakAfter !== undefined) this.spendStreamingFault();
    await this.write(res, answer, breakAfter);
  }

  private watchClose(res: ServerResponse, recorded: RecordedRequest) {
    const progress = { sent: 0, events: 0, droppedHere: false };
    this.progress.set(res, progress);
    res.once('close', () => {
      if (res.writableFinished || progress.droppedHere || this.server === null) return;
      recorded.clientClosed = { eventsSent: progress.sent, events: progress.events };
    });
  }

  /** One more streamed request met the streaming fault: cleared after its `times`. */
  private spendStreamingFault() {
    const fault = this.streamingFault;
    if (fault?.times !== undefined && --fault.times <= 0) this.streamingFault = null;
  }

  /** `breakAfter`: a streamed reply's connection is dropped after that many events. */
  private async write(res: ServerResponse, reply: EmulatorReply, breakAfter?: number) {
    if (reply.kind === 'json') {
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply.body));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.flushHeaders();
    const progress = this.progress.get(res);
    if (progress) progress.events = reply.events.length;
    for (const [i, event] of reply.events.entries()) {
      if (i === breakAfter) {
        await sleep(10); // what was written reaches the client before the connection drops
        if (progress) progress.droppedHere = true;
        res.destroy();
      }
      if (res.destroyed) return;
      res.write(`${event.event ? `event: ${event.event}\n` : ''}data: ${event.data}\n\n`);
      if (progress) progress.sent = i + 1;
      await sleep(this.options.chunkDelayMs ?? 0);
    }
    if (reply.done) res.write(`data: ${reply.done}\n\n`);
    res.end();
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sleep(ms: number) {
  return ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve();
}
