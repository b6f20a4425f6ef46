import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Engine } from '../../libs/engine';
import { ApiModule } from './api.module';

/** Builds the HTTP API on an engine (not listening yet). */
export async function createApiApp(engine: Engine, options: { logger?: boolean } = {}): Promise<INestApplication> {
  const app = await NestFactory.create(ApiModule.forEngine(engine), {
    logger: options.logger === false ? false : ['error', 'warn'],
    bodyParser: true,
  });
  app.enableShutdownHooks();
  return app;
}
