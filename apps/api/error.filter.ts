import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { type ErrorCategory, EngineError, TooManyRequestsError, UnavailableError } from '../../libs/errors';
import { databaseUnavailable } from '../../libs/events';
import { closeIfBodyUnread } from './server-limits';

/** The one place engine error categories become HTTP status codes. */
export const HTTP_STATUS_BY_CATEGORY = {
  invalid: 400,
  unprocessable: 422,
  conflict: 409,
  'precondition-failed': 412,
  'precondition-required': 428,
  'not-found': 404,
  unauthenticated: 401,
  forbidden: 403,
  'too-large': 413,
  unsupported: 415,
  'too-many-requests': 429,
  'payment-required': 402,
  unavailable: 503,
  internal: 500,
} as const satisfies Record<ErrorCategory, number>;

const REASON: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  428: 'Precondition Required',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/**
 * Maps typed engine errors to HTTP by category (body-parser errors arrive here already converted, see
 * `bodyErrorsAsEngineErrors` in request-gate.ts); a failure to reach the database becomes the
 * `unavailable` category (503 + Retry-After). Client errors are not logged; anything unexpected is a
 * 500 with no internals leaked, logged once.
 */
@Catch()
export class EngineErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('api');

  catch(error: unknown, host: ArgumentsHost) {
    const res = host.switchToHttp().getResponse<Response>();
    if (res.headersSent) return; // e.g. the client aborted an upload after an answer was already sent
    // refused before its body was read (401, 413, 415): the connection closes after the answer, the rest is never read
    closeIfBodyUnread(host.switchToHttp().getRequest<Request>(), res);
    if (error instanceof HttpException) {
      const body = error.getResponse();
      res.status(error.getStatus()).json(typeof body === 'string' ? { statusCode: error.getStatus(), message: body } : body);
      return;
    }
    const engineError = error instanceof EngineError ? error : databaseUnavailable(error);
    if (engineError) {
      const status = HTTP_STATUS_BY_CATEGORY[engineError.category];
      // a dependency outage is expected operation (one warning per request), anything else 5xx is an error
      // the error as fields (name, code, category): its message only with COVEL_LOG_PLAYER_TEXT, it may quote input
      if (engineError.category === 'unavailable') this.logger.warn(engineError);
      else if (status >= 500) this.logger.error(engineError);
      const body: Record<string, unknown> = { statusCode: status, error: REASON[status], code: engineError.code, message: engineError.message };
      if (engineError.issues.length > 0) body.issues = engineError.issues;
      if (engineError.details) body.details = engineError.details;
      // every 503 says when to try again
      if (engineError.category === 'unavailable')
        res.setHeader('Retry-After', String(engineError instanceof UnavailableError ? engineError.retryAfterSeconds : 1));
      if (engineError instanceof TooManyRequestsError) res.setHeader('Retry-After', String(engineError.retryAfterSeconds));
      res.status(status).json(body);
      return;
    }
    this.logger.error(error instanceof Error ? error : `a non-Error was thrown (${typeof error})`);
    res.status(500).json({ statusCode: 500, error: 'Internal Server Error', message: 'internal error' });
  }
}
