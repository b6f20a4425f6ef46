import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** What the API's HTTP server allows a client (`config.http`, from `COVEL_HTTP_*`). */
export interface HttpServerLimits {
  /** The headers of a request must arrive within this (then 408, connection closed). */
  headersTimeoutMs: number;
  /** The whole request (headers and body) must arrive within this; the answer is not bounded by it. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** Connections held at once; one more is closed as it is accepted. */
  maxConnections: number;
}

/** Node checks the headers and request timeouts on an interval (30 s by default): often enough to keep them. */
const checkingIntervalMs = (limits: HttpServerLimits) =>
  Math.min(30_000, Math.max(50, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4)));

/**
 * Sets the API's HTTP server limits, before it listens (Node reads the checking interval when it starts
 * listening): a client that sends its headers or body slowly is answered 408 and cut off after the
 * timeout, an idle keep-alive connection closes, and connections past the cap are refused. Receiving
 * only: an event stream's (or a long-poll's) answer may last as long as it needs.
 */
export function applyServerLimits(server: Server, limits: HttpServerLimits): void {
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.maxConnections = limits.maxConnections;
  // a plain property of http.Server that Node reads when it starts listening (the `createServer` option)
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = checkingIntervalMs(limits);
}

/**
 * For an answer given before the request's body has been read (a 401, a 413, a 415): the connection
 * closes once the answer is sent instead of reading the rest of the body (up to the body limit, or
 * 50 MB a client claims to send) only to throw it away. Nothing when the body has been read.
 */
export function closeIfBodyUnread(req: IncomingMessage, res: ServerResponse): void {
  if (req.complete || res.headersSent) return;
  res.setHeader('Connection', 'close');
  res.once('finish', () => req.destroy());
}
