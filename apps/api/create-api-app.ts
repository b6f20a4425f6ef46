import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Engine } from '../../libs/engine';
import { NestEngineLogger } from '../nest-logger';
import { httpServerSpans } from '../../libs/telemetry';
import { ApiModule } from './api.module';
import type { SessionEventsTimings } from './session-events/session-events.service';
import { mountOperations } from './operations';
import { authenticateTenant, bodyErrorsAsEngineErrors, isAcceptedJsonBody, jsonBodyGate, rejectUndecodablePath } from './request-gate';

/**
 * Builds the HTTP API on an engine (not listening yet). Nest's own body parser is off: on `/v1` the
 * tenant is authenticated first, then the headers are checked (JSON, UTF-8, declared size), and only
 * then is the body read, up to `config.bodyLimitBytes`. Every failure on the way is an engine error
 * mapped to its status by `error.filter.ts`.
 */
export async function createApiApp(engine: Engine, options: { logger?: boolean; sessionEvents?: SessionEventsTimings } = {}): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(
    ApiModule.forEngine(engine, options.sessionEvents ? { sessionEvents: options.sessionEvents } : {}),
    {
      logger: options.logger === false ? false : new NestEngineLogger(engine.logger),
      bodyParser: false,
    },
  );
  app.use(httpServerSpans()); // first: the request's span is active in everything below (a no-op with tracing off)
  mountOperations(app, engine); // GET /metrics, the idempotent-replay count, the queue dashboard (off by default)
  const limitBytes = engine.config.bodyLimitBytes;
  app.use('/v1', authenticateTenant(engine), rejectUndecodablePath, jsonBodyGate({ limitBytes }));
  app.useBodyParser('json', { limit: limitBytes, type: isAcceptedJsonBody });
  app.use(bodyErrorsAsEngineErrors);
  app.enableShutdownHooks();
  return app;
}
