import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication, INestApplicationContext } from '@nestjs/common';
import { createApiApp } from '../../apps/api/create-api-app';
import { PlayClient } from '../../apps/play/play-client';
import { createWorkerApp } from '../../apps/worker/create-worker-app';
import { createEngine, type Engine, loadConfig, type Logger } from '../../libs/engine';

export interface EmbeddedEngine {
  engine: Engine;
  baseUrl: string;
  dataDir: string;
  /** A client with a fresh tenant's key. */
  newTenant(name?: string): Promise<PlayClient>;
  stop(options?: { keepData?: boolean }): Promise<void>;
}

const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

/** The embedded default (PGlite in a temp dir, in-process queue, emulator) on a free port; `logger`: where the engine logs (default: nowhere). */
export async function startEmbedded(env: Record<string, string> = {}, dataDir?: string, logger: Logger = quiet): Promise<EmbeddedEngine> {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'covel-test-'));
  const { DATABASE_URL, REDIS_URL, OPENAI_API_KEY, COVEL_EMULATOR_URL, ...inherited } = process.env;
  const config = loadConfig({ ...inherited, COVEL_DATA_DIR: dir, PORT: '0', ...env });
  const engine = await createEngine(config, 'all', logger);
  let worker: INestApplicationContext | null = null;
  let api: INestApplication | null = null;
  try {
    worker = await createWorkerApp(engine);
    await worker.init();
    api = await createApiApp(engine, { logger: false });
    await api.listen(0, '127.0.0.1');
  } catch (error) {
    await engine.close();
    throw error;
  }
  const baseUrl = (await api.getUrl()).replace('[::1]', '127.0.0.1');
  return {
    engine,
    baseUrl,
    dataDir: dir,
    async newTenant(name = 'tenant') {
      const { apiKey } = await engine.tenants.create(name);
      return new PlayClient(baseUrl, apiKey);
    },
    async stop(options = {}) {
      await api?.close();
      await worker?.close();
      await engine.close();
      if (!options.keepData) rmSync(dir, { recursive: true, force: true });
    },
  };
}
