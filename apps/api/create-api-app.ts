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
import { requireScope } from './scopes';
import { ADMIN_TENANTS_PATH, operatorGate } from './operations/admin-tenants.controller';
import { budgetGate } from './limits/budget-gate';
import { rateLimitTenant } from './limits/rate-limit';
import type { Server } from 'node:http';
import { json } from 'express';
import { applyServerLimits } from './server-limits';
import { inOrder } from './in-order';
import { JsonReplyAdapter } from './json-reply-adapter';
import { cappedRawBody } from './capped-body';
import { WORLD_BODY_LIMIT_BYTES, WORLD_IMPORT_LIMIT_BYTES } from './world-limits';
import {
  authenticateTenant,
  bodyErrorsAsEngineErrors,
  isAcceptedJsonBody,
  jsonBodyGate,
  readPlainJsonBody,
  rejectUndecodablePath,
  verifyJsonBody,
  verifyUtf8Body,
} from './request-gate';

/** `POST /v1/worlds/import` (the path is relative to the `/v1` mount). */
const isWorldImport = (req: { path: string }) => req.path === '/worlds/import';

/** A write to `/v1/worlds…` (the path is relative to the `/v1` mount). */
const isWorldWrite = (req: { path: string }) => req.path === '/worlds' || req.path.startsWith('/worlds/');

/**
 * Builds the HTTP API on an engine (not listening yet). Nest's own body parser is off: on `/v1` the
 * tenant is authenticated first, then the headers are checked (JSON, UTF-8, declared size), and only
 * then is the body read, up to `config.bodyLimitBytes`. Every failure on the way is an engine error
 * mapped to its status by `error.filter.ts`. No shutdown hooks of Nest's own: the process closes it
 * on a signal (`closeOnSignals`, apps/process-lifecycle.ts), a test with `app.close()`.
 */
export async function createApiApp(engine: Engine, options: { logger?: boolean; sessionEvents?: SessionEventsTimings } = {}): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(
    ApiModule.forEngine(engine, options.sessionEvents ? { sessionEvents: options.sessionEvents } : {}),
    new JsonReplyAdapter(), // a write's JSON answer without express's ETag of it
    {
      logger: options.logger === false ? false : new NestEngineLogger(engine.logger),
      bodyParser: false,
    },
  );
  // slow clients are cut off (408), idle connections close, connections past the cap are refused (COVEL_HTTP_*)
  applyServerLimits(app.getHttpServer() as Server, engine.config.http);
  app.use(httpServerSpans()); // first: the request's span is active in everything below (a no-op with tracing off)
  mountOperations(app, engine); // GET /metrics (admin key), the idempotent-replay count, the queue dashboard (off by default)
  const limitBytes = engine.config.bodyLimitBytes;
  // a world document may be larger than any other body (WORLD_LIMITS.documentBytes, then a 413 naming that limit)
  const worldLimitBytes = Math.max(limitBytes, WORLD_BODY_LIMIT_BYTES);
  // one layer, the gates in this order (inOrder: as five layers would run them)
  app.use(
    '/v1',
    inOrder(
      authenticateTenant(engine),
      requireScope, // 403 before any body byte is read
      rateLimitTenant(engine), // the tenant's request rate (429 RATE_LIMITED), before any body byte is read
      rejectUndecodablePath,
      jsonBodyGate({
        limitBytes,
        limitFor: (req) => (isWorldImport(req) ? WORLD_IMPORT_LIMIT_BYTES : isWorldWrite(req) ? worldLimitBytes : limitBytes),
        // an imported world is a file (a card's PNG or JSON, a zip), read as bytes below
        skip: isWorldImport,
      }),
    ),
  );
  // the operator's tenants: its key first (401), then the same body checks
  app.use(ADMIN_TENANTS_PATH, operatorGate(engine), rejectUndecodablePath, jsonBodyGate({ limitBytes }));
  // any content type, multipart included (the route's multipart reader takes the bytes read here): 413 at once past the limit
  app.use('/v1/worlds/import', cappedRawBody({ limitBytes: WORLD_IMPORT_LIMIT_BYTES }));
  // a world document's depth is its own check (INVALID_WORLD naming the whole path); UTF-8 is checked here
  app.use('/v1/worlds', json({ limit: worldLimitBytes, type: isAcceptedJsonBody, verify: verifyUtf8Body }));
  // the usual body (a JSON type, its length declared, not encoded) read here, decoded once; any other by the JSON parser
  app.use(readPlainJsonBody({ limitBytes }));
  app.useBodyParser('json', { limit: limitBytes, type: isAcceptedJsonBody, verify: verifyJsonBody });
  app.use(bodyErrorsAsEngineErrors);
  app.use('/v1', budgetGate(engine)); // a request that would start model calls: 402 BUDGET_EXHAUSTED before anything is appended
  return app;
}
