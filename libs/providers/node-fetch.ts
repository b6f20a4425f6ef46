import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { pipeline, type Readable } from 'node:stream';
import zlib from 'node:zlib';

/**
 * The `fetch` the OpenAI SDK is given: their request sent over `node:http`
 * / `node:https` with keep-alive agents, the answer a web `Response` whose body is the socket's
 * bytes. Node's own fetch (undici) runs each request through the Fetch spec's machinery (a
 * `Request`, its headers list and signal, web streams on both sides, several promises per chunk):
 * about a third of the CPU of a streamed model call in the worker (issue 33: ~0.65 ms a call,
 * 10 calls per Emberback turn). What goes on the wire is what undici sends: the same header fields
 * and values (its defaults `accept`, `accept-language`, `sec-fetch-mode`, `user-agent`,
 * `accept-encoding` where the SDK set none, the last `br, gzip, deflate` over https and
 * `gzip, deflate` over http, as undici's), the same body bytes; the SDK's fields come in the order
 * `Headers` lists them (by name), not in the order the SDK set them (HTTP gives no meaning to it),
 * and as `Headers` names them: in lower case, as the OpenAI SDK writes them (the Anthropic SDK
 * writes `User-Agent`, `X-Stainless-*`: undici keeps that case, this could not, so it is not given
 * this fetch).
 * The answer is decoded as undici decodes it (gzip, deflate, br; not at all if one of its codings
 * is another); a body cut short or undecodable errors its stream with `TypeError('terminated')`
 * (and closes the socket, as a cancelled body does), a failed request or a malformed answer
 * rejects with `TypeError('fetch failed')` and an aborted one with its signal's reason, as undici
 * does (one difference: a status outside 200-599, which undici hands over, is a malformed answer
 * here, as a web `Response` cannot have it). Anything else (a redirect, a streamed request body,
 * a `Request` input, an option of undici's own) goes to `globalThis.fetch`.
 */
export function providerFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const url = typeof input === 'string' ? safeUrl(input) : input instanceof URL ? input : null;
  const body = init.body ?? null;
  if (!url || !AGENTS[url.protocol] || !plainInit(init) || !(body === null || typeof body === 'string' || body instanceof Uint8Array)) {
    return globalThis.fetch(input, init);
  }
  for (const listener of listeners) listener(url);
  return send(url, init, body);
}

const listeners = new Set<(url: URL) => void>();

/** Told of each request `providerFetch` sends itself (the process's request counters); returns the undo. */
export function observeProviderFetches(listener: (url: URL) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Idle sockets close after this (undici's keep-alive default), before a server drops them under a request. */
const KEEP_ALIVE_IDLE_MS = 4_000;
const AGENTS: Record<string, http.Agent> = {
  'http:': new http.Agent({ keepAlive: true, timeout: KEEP_ALIVE_IDLE_MS }),
  'https:': new https.Agent({ keepAlive: true, timeout: KEEP_ALIVE_IDLE_MS }),
};
const INIT_KEYS = new Set(['method', 'headers', 'body', 'signal', 'redirect']);
/** The fields undici's fetch adds when the request has none, in its order, with its values: by protocol, as its `accept-encoding` offers `br` over https only. */
const UNDICI_DEFAULTS: Record<string, readonly (readonly [string, string])[]> = {
  'http:': undiciDefaults('gzip, deflate'),
  'https:': undiciDefaults('br, gzip, deflate'),
};
function undiciDefaults(acceptEncoding: string): readonly (readonly [string, string])[] {
  return [
    ['accept', '*/*'],
    ['accept-language', '*'],
    ['sec-fetch-mode', 'cors'],
    ['user-agent', 'node'],
    ['accept-encoding', acceptEncoding],
  ];
}
const REDIRECT = new Set([301, 302, 303, 307, 308]);
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

function plainInit(init: RequestInit): boolean {
  for (const key of Object.keys(init)) if (!INIT_KEYS.has(key) && (init as Record<string, unknown>)[key] !== undefined) return false;
  return init.redirect === undefined || init.redirect === 'follow';
}

function safeUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

/** The request's head as it goes on the wire: its method, its header fields (name, value, name, ...) in their order, and its body's bytes. */
export function requestHead(url: URL, init: RequestInit, body: string | Uint8Array | null): { method: string; raw: string[]; bytes: Uint8Array | null } {
  const method = (init.method ?? 'GET').toUpperCase();
  // read, not changed: the SDK's own `Headers` as they are, not a copy of them per call
  const fields = init.headers instanceof Headers ? init.headers : new Headers(init.headers);
  const raw: string[] = ['host', url.host, 'connection', 'keep-alive'];
  for (const [name, value] of fields) raw.push(name, value);
  // the Fetch spec's type of a text body without one
  if (typeof body === 'string' && !fields.has('content-type')) raw.push('content-type', 'text/plain;charset=UTF-8');
  for (const [name, value] of UNDICI_DEFAULTS[url.protocol] ?? []) if (!fields.has(name)) raw.push(name, value);
  const bytes = body === null ? null : typeof body === 'string' ? Buffer.from(body) : body;
  if (bytes !== null || (method !== 'GET' && method !== 'HEAD')) raw.push('content-length', String(bytes?.byteLength ?? 0));
  return { method, raw, bytes };
}

function send(url: URL, init: RequestInit, body: string | Uint8Array | null): Promise<Response> {
  const signal = init.signal ?? undefined;
  if (signal?.aborted) return Promise.reject(signal.reason);
  const { method, raw, bytes } = requestHead(url, init, body);
  return new Promise<Response>((resolve, reject) => {
    const request = (url.protocol === 'https:' ? https : http).request({
      agent: AGENTS[url.protocol],
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: url.port,
      path: url.pathname + url.search,
      method,
      headers: raw,
      setHost: false,
    });
    const onAbort = () => request.destroy(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const done = () => signal?.removeEventListener('abort', onAbort);
    // 'on', not 'once': the socket's errors come to the request after its first one too
    request.on('error', (error) => {
      done();
      reject(signal?.aborted ? signal.reason : new TypeError('fetch failed', { cause: error }));
    });
    request.once('upgrade', (_response, socket) => {
      // a 101 to a request that asked for none (without a listener, node:http would leave the request unsettled)
      socket.destroy();
      done();
      reject(new TypeError('fetch failed', { cause: new Error('bad upgrade') }));
    });
    request.once('response', (response) => {
      try {
        resolve(answered(response, url, init, method, signal, done));
      } catch (error) {
        // a malformed answer (a redirect to no URL, a status or field a web Response refuses): undici's network error
        response.destroy();
        done();
        reject(new TypeError('fetch failed', { cause: error }));
      }
    });
    request.end(bytes ?? undefined);
  });
}

/** The answer to the request: its `Response`, or the global fetch's of the redirect it follows; throws if the answer is malformed. */
function answered(
  response: IncomingMessage,
  url: URL,
  init: RequestInit,
  method: string,
  signal: AbortSignal | undefined,
  done: () => void,
): Response | Promise<Response> {
  const status = response.statusCode ?? 0;
  const location = response.headers.location;
  if (REDIRECT.has(status) && location !== undefined) {
    // undici follows it; so does the global fetch, from the place it points to
    const to = new URL(location, url);
    response.resume();
    done();
    return globalThis.fetch(to, redirected(init, status, method, url, to));
  }
  const headers = new Headers();
  for (let i = 0; i < response.rawHeaders.length; i += 2) headers.append(response.rawHeaders[i]!, response.rawHeaders[i + 1]!);
  const empty = method === 'HEAD' || NULL_BODY.has(status);
  // if this throws, the caller's destroying the response ends the body's decoders too
  const answer = new Response(empty ? null : webBody(decoded(response, headers), response, signal, done), {
    status,
    statusText: response.statusMessage ?? '',
    headers,
  });
  Object.defineProperty(answer, 'url', { value: url.href });
  if (empty) {
    response.resume();
    done();
  }
  return answer;
}

/** The request a redirect leads to (the Fetch spec's rules: a 303, or a POST's 301 / 302, becomes a GET without body; no credentials to another origin). */
function redirected(init: RequestInit, status: number, method: string, from: URL, to: URL): RequestInit {
  const headers = new Headers(init.headers);
  if (from.origin !== to.origin) headers.delete('authorization');
  if (status === 303 ? method !== 'GET' && method !== 'HEAD' : (status === 301 || status === 302) && method === 'POST') {
    for (const name of ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location']) headers.delete(name);
    return { ...init, method: 'GET', body: null, headers };
  }
  return { ...init, headers };
}

/** The body as undici hands it over: the content codings undone, last applied first; as it came if one of them is not gzip, deflate or br. */
function decoded(response: IncomingMessage, headers: Headers): Readable {
  const codings = (headers.get('content-encoding') ?? '')
    .toLowerCase()
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean)
    .reverse();
  if (codings.length === 0 || !codings.every((coding) => DECODABLE.has(coding))) return response;
  // a pipeline: an error in any of them (a corrupt body, the socket cut) destroys them all
  const decoders = codings.map(decoderFor);
  pipeline([response, ...decoders], () => undefined);
  return decoders.at(-1)!;
}

const DECODABLE = new Set(['gzip', 'x-gzip', 'deflate', 'br']);

function decoderFor(coding: string): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress {
  const flush = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
  if (coding === 'deflate') return zlib.createInflate(flush);
  if (coding === 'br') return zlib.createBrotliDecompress({ flush: zlib.constants.BROTLI_OPERATION_FLUSH, finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH });
  return zlib.createGunzip(flush);
}

/**
 * A node stream as a web byte stream: its chunks as they come (paused while the reader is behind).
 * A cancel or an error destroys the response too (`source` is its decoders' end), so that its socket
 * is not left busy with a body no one reads.
 */
function webBody(source: Readable, response: IncomingMessage, signal: AbortSignal | undefined, done: () => void): ReadableStream<Uint8Array> {
  let ended = false;
  const finish = () => {
    ended = true;
    done();
    response.destroy();
    source.destroy();
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        source.on('data', (chunk: Buffer) => {
          controller.enqueue(chunk);
          if ((controller.desiredSize ?? 0) <= 0) source.pause();
        });
        source.once('end', () => {
          ended = true;
          done();
          controller.close();
        });
        const fail = (error: unknown) => {
          if (ended) return;
          finish();
          controller.error(signal?.aborted ? signal.reason : new TypeError('terminated', { cause: error }));
        };
        // 'on', not 'once': a stream may emit a second error, which must not be unhandled
        source.on('error', fail);
        source.once('close', () => fail(new Error('the connection closed before the body ended')));
      },
      pull() {
        source.resume();
      },
      cancel() {
        if (!ended) finish();
      },
    },
    { highWaterMark: 64 * 1024, size: (chunk) => chunk.byteLength },
  );
}
