import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { NextFunction, Request, Response } from 'express';
import { InvalidInputError } from '../../libs/errors';
import { BodyTooLargeError, UnsupportedBodyError } from './request-errors';

/** The bytes `cappedRawBody` read, by request (multer replaces `req.body` with the form's fields). */
const rawBodies = new WeakMap<Request, Buffer>();

/** The body `cappedRawBody` read for this request, or null when it had none. */
export const rawBodyOf = (req: Request): Buffer | null => rawBodies.get(req) ?? null;

const hasBody = (req: Request) => req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

/** The content-encodings read (as body-parser reads them): the limit counts the decoded bytes. */
const DECODERS: Record<string, () => NodeJS.ReadWriteStream> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/**
 * Reads a request's body as bytes ({@link rawBodyOf}), whatever its content type, for a route
 * that reads its body as a file (`POST /v1/worlds/import`). At most `limitBytes` (decoded, for a
 * gzip, deflate or br body): past them — a chunked upload; a declared length past the limit is
 * refused by the gate before this — reading stops at once and the answer is a 413 with
 * `Connection: close`, so the rest of the upload is never read. body-parser's `raw()` (and multer)
 * read off the whole body before answering, however large.
 */
export function cappedRawBody(options: { limitBytes: number }) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!hasBody(req)) return next();
    const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    const decoder = encoding === 'identity' ? null : (DECODERS[encoding]?.() ?? null);
    if (encoding !== 'identity' && decoder === null) {
      res.setHeader('Connection', 'close');
      const shown = /^[\w.+-]{1,40}$/.test(encoding) ? ` "${encoding}"` : '';
      return next(new UnsupportedBodyError('UNSUPPORTED_ENCODING', `unsupported content-encoding${shown}: use gzip, deflate, br or none`));
    }
    const source: Readable = decoder === null ? req : (req.pipe(decoder) as unknown as Readable);
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      source.off('data', onData).off('end', onEnd).off('error', onError);
      req.off('error', onError).off('aborted', onError);
      if (error === undefined) {
        rawBodies.set(req, Buffer.concat(chunks, received));
        return next();
      }
      // the rest of the body is never read: the connection closes once the answer is sent
      if (decoder !== null) {
        req.unpipe(decoder as unknown as NodeJS.WritableStream);
        source.destroy();
      }
      req.pause();
      res.setHeader('Connection', 'close');
      next(error);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > options.limitBytes) return finish(new BodyTooLargeError(options.limitBytes));
      chunks.push(chunk);
    };
    const onEnd = () => finish();
    const onError = () =>
      finish(
        new InvalidInputError(
          [{ path: '(body)', message: decoder === null ? 'the upload broke off before its end' : `does not decode as ${encoding}` }],
          'MALFORMED_BODY',
        ),
      );
    source.on('data', onData).on('end', onEnd).on('error', onError);
    req.on('error', onError).on('aborted', onError);
  };
}
