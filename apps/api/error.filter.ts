import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { SessionNotFoundError } from '../../libs/engine';

/** Maps typed engine errors to HTTP; anything unexpected is a 500 with no internals leaked. */
@Catch()
export class EngineErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('api');

  catch(error: unknown, host: ArgumentsHost) {
    const res = host.switchToHttp().getResponse<Response>();
    if (error instanceof HttpException) {
      const body = error.getResponse();
      res.status(error.getStatus()).json(typeof body === 'string' ? { statusCode: error.getStatus(), message: body } : body);
      return;
    }
    if (error instanceof SessionNotFoundError) {
      res.status(404).json({ statusCode: 404, error: 'Not Found', message: error.message });
      return;
    }
    this.logger.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    res.status(500).json({ statusCode: 500, error: 'Internal Server Error', message: 'internal error' });
  }
}
