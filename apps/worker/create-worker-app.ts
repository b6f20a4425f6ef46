import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Engine } from '../../libs/engine';
import { NestEngineLogger } from '../nest-logger';
import { WorkerModule } from './worker.module';

/**
 * The worker as a NestJS standalone application (no HTTP). No shutdown hooks of Nest's own: the
 * process closes it on a signal (`closeOnSignals`, apps/process-lifecycle.ts).
 */
export async function createWorkerApp(engine: Engine): Promise<INestApplicationContext> {
  return NestFactory.createApplicationContext(WorkerModule.forEngine(engine), { logger: new NestEngineLogger(engine.logger) });
}
