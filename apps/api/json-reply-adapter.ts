// the adapter's own module: the package's index also loads its multer interceptors (world-file.interceptor.ts loads them at the first upload)
import { ExpressAdapter } from '@nestjs/platform-express/adapters/express-adapter';
import type { Request, Response } from 'express';

/** Statuses whose answer express sends without a body (it strips the body and its headers itself). */
const BODILESS = new Set([204, 205, 304]);

/** What express's `res.json` sets (`application/json`, its charset added by `res.set` and again by `res.send`). */
const JSON_TYPE = 'application/json; charset=utf-8';

/** What a route answers as JSON: an object or array built of plain data (no stream, file, Error or bytes). */
const isPlainJson = (body: unknown): body is object =>
  typeof body === 'object' && body !== null && (Array.isArray(body) || Object.getPrototypeOf(body) === Object.prototype);

/** Express's ETag function (the app's `etag` setting: `weak` by default), or none when it is off. */
type EtagFn = (body: Buffer, encoding?: BufferEncoding) => string | undefined;

/**
 * Nest's Express adapter, with a route's plain JSON answer written directly (issue 33: the API's
 * CPU per request), as express's `res.json` writes it with the app's default JSON settings:
 * `application/json; charset=utf-8`, its length, the text. Not for a request that is a GET or HEAD
 * (a POST's `202`, a PATCH's `200`): no ETag, which no conditional request could use (`If-None-Match`
 * applies to GET and HEAD). A GET or HEAD: the ETag express's `etag fn` makes of the bytes, and 304
 * with no body or body headers when the request's validators match (express's `req.fresh`); a HEAD
 * gets the headers alone. Without express's content type parsed and formatted twice per answer.
 * Everything else goes the Express way: an answer whose type or ETag the route set, a status sent
 * without a body, anything that is not plain JSON.
 */
export class JsonReplyAdapter extends ExpressAdapter {
  override reply(response: Response, body: unknown, statusCode?: number): unknown {
    if (
      !isPlainJson(body) ||
      response.getHeader('Content-Type') !== undefined ||
      response.getHeader('ETag') !== undefined ||
      BODILESS.has(statusCode ?? response.statusCode)
    ) {
      return super.reply(response, body, statusCode);
    }
    if (statusCode) response.status(statusCode);
    const text = JSON.stringify(body);
    response.setHeader('Content-Type', JSON_TYPE);
    const req: Request = response.req;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      response.setHeader('Content-Length', Buffer.byteLength(text));
      return response.end(text);
    }
    return this.read(response, req, text);
  }

  /** A GET's or HEAD's JSON answer, as `res.send` ends it: length, ETag, freshness. */
  private read(response: Response, req: Request, text: string): unknown {
    const etagFn = (response.app.get('etag fn') as EtagFn | undefined) ?? null;
    const bytes = Buffer.from(text, 'utf8');
    response.setHeader('Content-Length', bytes.length);
    const etag = typeof etagFn === 'function' ? etagFn(bytes) : undefined;
    if (etag) response.setHeader('ETag', etag);
    if (req.fresh) {
      response.status(304);
      response.removeHeader('Content-Type');
      response.removeHeader('Content-Length');
      response.removeHeader('Transfer-Encoding');
      return req.method === 'HEAD' ? response.end() : response.end('');
    }
    // the text, not its bytes: node writes it in one piece with the headers (bytes go as a chunk of their own)
    return req.method === 'HEAD' ? response.end() : response.end(text);
  }
}
