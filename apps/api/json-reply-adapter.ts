import { ExpressAdapter } from '@nestjs/platform-express';
import type { Response } from 'express';

/** Statuses whose answer express sends without a body (it strips the body and its headers itself). */
const BODILESS = new Set([204, 205, 304]);

/** What a route answers as JSON: an object or array built of plain data (no stream, file, Error or bytes). */
const isPlainJson = (body: unknown): body is object =>
  typeof body === 'object' && body !== null && (Array.isArray(body) || Object.getPrototypeOf(body) === Object.prototype);

/**
 * Nest's Express adapter, with the JSON answer of a request that is not a GET or HEAD (a POST's
 * `202`, a PATCH's `200`) written directly: `application/json; charset=utf-8`, its length, the text.
 * Express's `res.json` would also make a weak ETag of it (a SHA-1 of the body) that no conditional
 * request can use (`If-None-Match` applies to GET and HEAD), and parse and format its content type
 * twice (issue 33: the API's CPU per request). Everything else goes the Express way: GET and HEAD
 * (their ETag and 304), an answer whose type or ETag the route set, a status sent without a body.
 */
export class JsonReplyAdapter extends ExpressAdapter {
  override reply(response: Response, body: unknown, statusCode?: number): unknown {
    const method = response.req.method;
    if (
      method === 'GET' ||
      method === 'HEAD' ||
      !isPlainJson(body) ||
      response.getHeader('Content-Type') !== undefined ||
      response.getHeader('ETag') !== undefined ||
      BODILESS.has(statusCode ?? response.statusCode)
    ) {
      return super.reply(response, body, statusCode);
    }
    if (statusCode) response.status(statusCode);
    const text = JSON.stringify(body);
    response.setHeader('Content-Type', 'application/json; charset=utf-8');
    response.setHeader('Content-Length', Buffer.byteLength(text));
    return response.end(text);
  }
}
