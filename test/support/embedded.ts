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
  /** `keepData`: leave the data directory (and the database in it: `onDisk` only) for a tool or a restart to open. */
  stop(options?: { keepData?: boolean }): Promise<void>;
}

export interface EmbeddedOptions {
  /** Where the engine logs (default: nowhere). */
  logger?: Logger;
  /**
   * The PGlite database in `<dataDir>/pglite`, as `npm start` keeps it (and media as files beside it):
   * for a test that stops the engine and opens its database again (a tool, a restart) or reads its
   * files. Default in a Jest test: in memory unless a `dataDir` is given (nothing to unpack on disk,
   * lock or delete: a start costs less); elsewhere (the benchmarks): on disk, as the embedded default runs.
   */
  onDisk?: boolean;
}

const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * The embedded default (PGlite, in-process queue, emulator) on a free port, its data directory a
 * temp dir (or `dataDir`); its database on disk or in memory (`options.onDisk`).
 */
export async function startEmbedded(env: Record<string, string> = {}, dataDir?: string, options: EmbeddedOptions = {}): Promise<EmbeddedEngine> {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'covel-test-'));
  const { DATABASE_URL, REDIS_URL, OPENAI_API_KEY, COVEL_EMULATOR_URL, ...inherited } = process.env;
  const config = loadConfig({ ...inherited, COVEL_DATA_DIR: dir, PORT: '0', ...env });
  const onDisk = options.onDisk ?? (dataDir !== undefined || process.env.JEST_WORKER_ID === undefined);
  const inMemory = !onDisk && config.database.kind === 'pglite';
  const engine = await createEngine(inMemory ? { ...config, database: { kind: 'pglite' } } : config, 'all', options.logger ?? quiet);
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
    async stop(stopOptions = {}) {
      await api?.close();
      await worker?.close();
      await engine.close();
      if (stopOptions.keepData && inMemory) throw new Error('stop({ keepData }): the database was in memory; start with { onDisk: true } to keep it');
      if (!stopOptions.keepData) rmSync(dir, { recursive: true, force: true });
    },
  };
}
