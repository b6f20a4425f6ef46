import { EngineError, InvalidInputError } from '../../libs/errors';

/** No, or an unknown, API key (401). */
export class UnauthenticatedError extends EngineError {
  readonly category = 'unauthenticated';
  constructor(
    readonly code: 'MISSING_API_KEY' | 'UNKNOWN_API_KEY',
    message: string,
  ) {
    super(message);
  }
}

/** The API key is good but lacks the scope the route needs (403): `details.requiredScope` names it. */
export class InsufficientScopeError extends EngineError {
  readonly code = 'INSUFFICIENT_SCOPE';
  readonly category = 'forbidden';
  override readonly details: Readonly<Record<string, unknown>>;
  constructor(readonly requiredScope: string) {
    super(`this API key lacks the \`${requiredScope}\` scope this request needs`);
    this.details = { requiredScope };
  }
}

/** The body is over the configured limit (413). */
export class BodyTooLargeError extends EngineError {
  readonly code = 'BODY_TOO_LARGE';
  readonly category = 'too-large';
  constructor(readonly limitBytes: number | null) {
    super(limitBytes === null ? 'body: larger than the body limit' : `body: larger than the limit of ${limitBytes} bytes`);
  }
}

/** A media type, charset or content-encoding the API does not read (415). */
export class UnsupportedBodyError extends EngineError {
  readonly category = 'unsupported';
  constructor(
    readonly code: 'UNSUPPORTED_MEDIA_TYPE' | 'UNSUPPORTED_CHARSET' | 'UNSUPPORTED_ENCODING',
    message: string,
  ) {
    super(message);
  }
}

const malformed = (message: string, code = 'MALFORMED_BODY') => new InvalidInputError([{ path: '(body)', message }], code);

/** A body that is not one JSON object or array (400 `MALFORMED_BODY`). */
export const malformedJsonError = () => malformed('malformed JSON: the body must be one JSON object');

/** A body that ended before its declared length, or whose upload broke off (400 `BODY_INCOMPLETE`). */
export const incompleteBodyError = (why: 'aborted' | 'length') =>
  malformed(why === 'aborted' ? 'request aborted before the body was complete' : 'body length did not match content-length', 'BODY_INCOMPLETE');

/** A header value safe to repeat in an answer (short, plain), or null. */
const echo = (value: unknown): string | null => (typeof value === 'string' && /^[\w.+-]{1,40}$/.test(value) ? value : null);

/**
 * An error of the body parser (body-parser, raw-body, zlib) as an engine error, so `error.filter.ts` maps
 * it like any other: client errors become 4xx with a reason and no stack trace. Returns null for
 * anything else (a bug: the filter answers 500 and logs it).
 */
export function fromBodyParserError(error: unknown): EngineError | null {
  if (error instanceof EngineError) return error;
  if (typeof error !== 'object' || error === null) return null;
  const e = error as { type?: unknown; status?: unknown; statusCode?: unknown; limit?: unknown; charset?: unknown; encoding?: unknown; code?: unknown };
  const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : null;
  switch (e.type) {
    case 'entity.too.large':
      return new BodyTooLargeError(typeof e.limit === 'number' ? e.limit : null);
    case 'charset.unsupported': {
      const charset = echo(e.charset);
      return new UnsupportedBodyError('UNSUPPORTED_CHARSET', `unsupported charset${charset ? ` "${charset}"` : ''}: send UTF-8 JSON`);
    }
    case 'encoding.unsupported': {
      const encoding = echo(e.encoding);
      return new UnsupportedBodyError('UNSUPPORTED_ENCODING', `unsupported content-encoding${encoding ? ` "${encoding}"` : ''}: use gzip, deflate, br or none`);
    }
    case 'entity.parse.failed':
      return malformedJsonError();
    case 'request.aborted':
      return incompleteBodyError('aborted');
    case 'request.size.invalid':
      return incompleteBodyError('length');
  }
  // a compressed body that does not decompress (zlib's Z_DATA_ERROR, Z_BUF_ERROR, ...)
  if (typeof e.code === 'string' && e.code.startsWith('Z_') && status !== null && status < 500) {
    return malformed('the body does not decode with its content-encoding');
  }
  if (status === 413) return new BodyTooLargeError(null);
  if (status === 415) return new UnsupportedBodyError('UNSUPPORTED_MEDIA_TYPE', 'unsupported body');
  if (status !== null && status >= 400 && status < 500) return malformed('the request body could not be read', 'BAD_REQUEST');
  return null;
}
