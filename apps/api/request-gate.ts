import { AsyncResource } from 'node:async_hooks';
import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Engine } from '../../libs/engine';
import type { TenantRequest } from './auth.guard';
import type { Caller } from '../../libs/events';
import { InvalidInputError, NotFoundError } from '../../libs/errors';
import { jsonTextTooDeep, MAX_JSON_DEPTH } from './json-limits';
import { BodyTooLargeError, fromBodyParserError, incompleteBodyError, malformedJsonError, UnauthenticatedError, UnsupportedBodyError } from './request-errors';

/** Requests whose body the JSON parser may read: authenticated, JSON, UTF-8, within the limit. */
const acceptedBodies = new WeakSet<IncomingMessage>();

/**
 * Of those, the bodies {@link readPlainJsonBody} reads itself: a usual JSON content type, a declared
 * length, no transfer- or content-encoding.
 */
const plainBodies = new WeakSet<IncomingMessage>();

/** For the parser's `type` option: parse only what the gate let through. */
export const isAcceptedJsonBody = (req: IncomingMessage): boolean => acceptedBodies.has(req);

const hasBody = (req: IncomingMessage) => req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

/** The usual `Content-Type`s of a JSON body, accepted without parsing them. */
const PLAIN_JSON_TYPES: ReadonlySet<string> = new Set(['application/json', 'application/json; charset=utf-8', 'application/json;charset=utf-8']);

const isJsonMediaType = (mediaType: string) => mediaType === 'application/json' || /^application\/[\w.-]+\+json$/.test(mediaType);

/**
 * `Authorization: Bearer <tenant api key>`, looked up by its HMAC, before a single body byte is read:
 * an unauthenticated caller (unknown or revoked key) gets 401 whatever it sends. Sets `req.tenant`,
 * `req.key` (id and scopes) and `req.keyId` (the key's id).
 */
export function authenticateTenant(engine: Engine) {
  const admit = (req: Request, next: NextFunction, caller: Caller | null): void => {
    if (!caller) throw new UnauthenticatedError('UNKNOWN_API_KEY', 'unknown api key');
    (req as TenantRequest).tenant = caller.tenant;
    (req as TenantRequest).key = caller.key;
    (req as TenantRequest).keyId = caller.key.id;
    next();
  };
  // a key found lately is answered at once, without a promise (issue 33: CPU per request)
  return (req: Request, _res: Response, next: NextFunction): void | Promise<void> => {
    const match = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    if (!match) throw new UnauthenticatedError('MISSING_API_KEY', 'missing Authorization: Bearer <api key>');
    const remembered = engine.tenants.remembered(match[1]);
    if (remembered) return admit(req, next, remembered);
    return engine.tenants.authenticate(match[1]).then((caller) => admit(req, next, caller));
  };
}

/**
 * Decides, from the headers alone, whether a body may be read: none at all is fine; otherwise it must be
 * `application/json` (or `+json`) in UTF-8 (415), and a declared length over the limit is 413 at once
 * (no waiting for bytes that may never come). The parser then enforces the limit on what it reads,
 * after decompression, and rejects malformed JSON and content-encodings it does not know.
 */
export function jsonBodyGate(options: { limitBytes: number; limitFor?: (req: Request) => number; skip?: (req: Request) => boolean }) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (!hasBody(req)) return next();
    const declared = Number(req.headers['content-length']);
    const limit = options.limitFor?.(req) ?? options.limitBytes;
    if (Number.isFinite(declared) && declared > limit) throw new BodyTooLargeError(limit);
    // a route that reads its body as a file (its own parser; only the declared size is checked here)
    if (options.skip?.(req)) return next();
    // what clients send (issue 33: CPU per request); anything else is parsed below
    if (PLAIN_JSON_TYPES.has(req.headers['content-type'] ?? '')) {
      acceptedBodies.add(req);
      if (Number.isSafeInteger(declared) && req.headers['transfer-encoding'] === undefined && req.headers['content-encoding'] === undefined) {
        plainBodies.add(req);
      }
      return next();
    }
    const [mediaType = '', ...parameters] = (req.headers['content-type'] ?? '').split(';').map((p) => p.trim().toLowerCase());
    if (!isJsonMediaType(mediaType)) {
      throw new UnsupportedBodyError('UNSUPPORTED_MEDIA_TYPE', 'the body must be application/json (UTF-8)');
    }
    const charset = parameters
      .find((p) => p.startsWith('charset='))
      ?.slice('charset='.length)
      .replace(/^"(.*)"$/, '$1');
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      const shown = /^[\w.+-]{1,40}$/.test(charset) ? ` "${charset}"` : '';
      throw new UnsupportedBodyError('UNSUPPORTED_CHARSET', `unsupported charset${shown}: send UTF-8 JSON`);
    }
    acceptedBodies.add(req);
    next();
  };
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The world routes' JSON parser's `verify` hook: bytes that are not UTF-8 are a 400 (the parser would
 * read them as U+FFFD and store that). Their depth is the world document's check (`INVALID_WORLD`, naming
 * the whole path), which runs before anything walks the body.
 */
export function verifyUtf8Body(_req: IncomingMessage, _res: unknown, bytes: Buffer): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw new InvalidInputError([{ path: '(body)', message: 'is not valid UTF-8: send the JSON text as UTF-8' }], 'MALFORMED_BODY');
  }
}

/**
 * The JSON parser's `verify` hook for every other body, run on its bytes (after decompression) before
 * they are parsed: not UTF-8 is a 400 ({@link verifyUtf8Body}), and so is a body nesting deeper than
 * {@link MAX_JSON_DEPTH} levels, naming the top-level field it is in: no schema ever walks it (they
 * recurse once per level, and ~2,000 levels overflowed the stack: a 500).
 */
export function verifyJsonBody(req: IncomingMessage, res: unknown, bytes: Buffer): void {
  const tooDeep = jsonTextTooDeep(verifyUtf8Body(req, res, bytes), MAX_JSON_DEPTH);
  if (tooDeep) throw tooDeepError(tooDeep.path);
}

const tooDeepError = (path: string) =>
  new InvalidInputError([{ path, message: `nests deeper than ${MAX_JSON_DEPTH} levels of arrays and objects` }], 'JSON_TOO_DEEP');

/** JSON's whitespace (RFC 8259): space, tab, line feed, carriage return. */
const JSON_WHITESPACE: ReadonlySet<number> = new Set([0x20, 0x09, 0x0a, 0x0d]);

/** What body-parser's strict JSON parser would refuse, or its parse: an empty text is `{}`. */
const parseStrictJson = (text: string): unknown => {
  if (text.length === 0) return {};
  let i = 0;
  while (i < text.length && JSON_WHITESPACE.has(text.charCodeAt(i))) i++;
  if (text[i] !== '{' && text[i] !== '[') throw new SyntaxError('strict violation');
  return JSON.parse(text);
};

/**
 * Reads the usual JSON body itself (issue 33: CPU per request): one the gate accepted with a usual JSON
 * content type (UTF-8), its length declared (at most `limitBytes`: the gate refused more), no content- or
 * transfer-encoding. Its bytes are decoded once ({@link verifyJsonBody}'s checks on that text: UTF-8,
 * depth) and parsed as the JSON parser would (strict: an object or an array; empty is `{}`), with the same
 * answers. Any other body goes on to the JSON parser (body-parser), as does a request already read.
 */
export function readPlainJsonBody(options: { limitBytes: number }) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (!plainBodies.has(req) || req.readableEnded || Number(req.headers['content-length']) > options.limitBytes) return next();
    // the client went away while an earlier step (the key's lookup) was waiting: its events have fired
    if (req.destroyed) return next(incompleteBodyError('aborted'));
    const declared = Number(req.headers['content-length']);
    const chunks: Buffer[] = [];
    let received = 0;
    let finished = false;
    // the request's events run in the context they were emitted in: the chain goes on in this one (its trace)
    const goOn = AsyncResource.bind((error: unknown) => (error === undefined ? next() : next(error)));
    const finish = (error: unknown) => {
      if (finished) return;
      finished = true;
      req.off('data', onData).off('end', onEnd).off('error', onAborted).off('aborted', onAborted).off('close', onClose);
      goOn(error);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      chunks.push(chunk);
    };
    const onEnd = () => {
      if (received !== declared) return finish(incompleteBodyError('length'));
      let text: string;
      try {
        text = verifyUtf8Body(req, undefined, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received));
      } catch (error) {
        return finish(error);
      }
      const tooDeep = jsonTextTooDeep(text, MAX_JSON_DEPTH);
      if (tooDeep) return finish(tooDeepError(tooDeep.path));
      try {
        req.body = parseStrictJson(text);
      } catch {
        return finish(malformedJsonError());
      }
      finish(undefined);
    };
    const onAborted = () => finish(incompleteBodyError('aborted'));
    const onClose = () => {
      if (!req.complete) onAborted();
    };
    req.on('data', onData).on('end', onEnd).on('error', onAborted).on('aborted', onAborted).on('close', onClose);
  };
}

/**
 * A path whose percent-encoding does not decode (`%ZZ`, an encoded lone surrogate) cannot name anything
 * that exists: the same 404 as an unknown id, before the router tries (and fails) to decode it.
 */
export function rejectUndecodablePath(req: Request, _res: Response, next: NextFunction): void {
  try {
    decodeURIComponent(req.path);
  } catch {
    throw new NotFoundError('NOT_FOUND', 'not found');
  }
  next();
}

/**
 * Express error middleware after the body parser: body-parser / raw-body / zlib errors become engine
 * errors (413, 415, 400 with a reason) and go on to `error.filter.ts`, the one place that maps them.
 */
export function bodyErrorsAsEngineErrors(error: unknown, _req: Request, _res: Response, next: NextFunction): void {
  next(fromBodyParserError(error) ?? error);
}
