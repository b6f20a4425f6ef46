import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { Client } from 'pg';
import { deleteQueueKeys, loadConfig } from '../../libs/engine';
import { migrateToLatest, openDatabase, TenantStore } from '../../libs/events';
import type { Cleanups } from './cleanups';
import type { RunSpec } from './options';
import { type BenchProcess, spawnProcess } from './processes';

export const PG_ADMIN_URL = process.env.COVEL_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.COVEL_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * The keys' pepper (`COVEL_KEY_PEPPER`, checked as the engine checks it) or null: the bench's tenant
 * keys are hashed with it and its processes are given it (the rest of COVEL_* is not passed on), so
 * the keys it makes are the keys its API knows.
 */
export function benchKeyPepper(): string | null {
  return loadConfig({ COVEL_KEY_PEPPER: process.env.COVEL_KEY_PEPPER }).keyPepper;
}

/** `COVEL_KEY_PEPPER` for a bench process's environment, when one is set. */
export const keyPepperEnv = (pepper: string | null): Record<string, string> => (pepper ? { COVEL_KEY_PEPPER: pepper } : {});

/** A tenant of the bench database and its key (made through the engine's TenantStore before the API starts). */
export interface BenchTenant {
  id: string;
  name: string;
  apiKey: string;
}

/** What the stack needs of a run: the model latency, the workers and the pool size. */
export type StackSpec = Pick<RunSpec, 'latencyMs' | 'workers' | 'concurrency' | 'dbPoolSize'>;

export interface StartStackOptions {
  spec: StackSpec;
  cleanups: Cleanups;
  log: (line: string) => void;
  /** The tenants to make, each with its own key (default: one, `bench-load`). */
  tenantNames?: readonly string[];
}

/** What one run plays against: its own database and queue prefix, its tenants, and the processes. */
export interface BenchStack {
  baseUrl: string;
  /** The first tenant's key and id. */
  apiKey: string;
  tenantId: string;
  /** Every tenant made, in the order of `tenantNames`. */
  tenants: BenchTenant[];
  databaseName: string;
  /** The bench database, as the admin role (for the checks at the end). */
  databaseUrl: string;
  api: BenchProcess;
  workers: BenchProcess[];
  emulator: BenchProcess;
  /** The emulator's `host:port` (an engine's HTTP requests to it are model calls). */
  emulatorHost: string;
  /** Each engine process's /metrics (`COVEL_METRICS_PORT`): its round-trip counters. */
  metricsUrls: { api: string; workers: string[] };
  /** Stops the processes, deletes the queue's Redis keys, drops the database (once; safe to call again). */
  stop(): Promise<void>;
}

/**
 * Creates a fresh database (migrated, with the tenants) and a unique Redis prefix, then starts the
 * emulator with the run's latency, the API and the workers. Everything made is undone by `stop`, and
 * by `cleanups` if the bench is interrupted or this fails half-way.
 */
export async function startBenchStack(options: StartStackOptions): Promise<BenchStack> {
  const { spec, cleanups, log } = options;
  const tag = randomBytes(5).toString('hex');
  const databaseName = `covel_bench_${tag}`;
  const prefix = `covel-bench-${tag}`;
  const steps: (() => Promise<void>)[] = [];
  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      // last made, first undone; one failing step does not keep the others from running
      for (const step of steps.reverse()) await step().catch((e) => log(`cleanup: ${String(e)}`));
      unregister();
    })());
  const unregister = cleanups.add(stop);
  try {
    const admin = new Client({ connectionString: PG_ADMIN_URL });
    await admin.connect();
    try {
      await admin.query(`create database ${databaseName}`);
    } finally {
      await admin.end();
    }
    steps.push(() => dropDatabase(databaseName));
    steps.push(() => deleteQueueKeys(REDIS_URL, prefix));
    const url = new URL(PG_ADMIN_URL);
    url.pathname = `/${databaseName}`;
    const databaseUrl = url.toString();
    const keyPepper = benchKeyPepper();
    const tenants = await migrateWithTenants({ databaseUrl, names: options.tenantNames ?? ['bench-load'], keyPepper });
    if (tenants.length === 0) throw new Error('the bench stack needs at least one tenant');

    // all at once: each may take its grace period
    const processes: BenchProcess[] = [];
    steps.push(async () => void (await Promise.all(processes.map((p) => p.stop()))));
    const track = (p: BenchProcess) => processes.push(p);
    const baseEnv = processEnv({
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      COVEL_QUEUE_PREFIX: prefix,
      ...keyPepperEnv(keyPepper),
      ...(spec.dbPoolSize === undefined ? {} : { COVEL_DB_POOL_SIZE: String(spec.dbPoolSize) }),
    });
    const emulator = await spawnProcess(
      {
        name: 'emulator',
        script: 'bench/load/emulator-process.ts',
        env: { ...baseEnv, COVEL_EMULATOR_DELAY_MS: String(spec.latencyMs) },
        ready: /emulator listening on/,
      },
      track,
    );
    const emulatorUrl = /listening on (\S+)/.exec(emulator.readyLine)![1];
    const env = { ...baseEnv, COVEL_EMULATOR_URL: emulatorUrl };
    const port = await freePort();
    const apiMetricsPort = await freePort();
    const workerMetricsPorts = await Promise.all(Array.from({ length: spec.workers }, () => freePort()));
    const api = await spawnProcess(
      {
        name: 'api',
        script: 'apps/api/main.ts',
        env: { ...env, PORT: String(port), COVEL_HOST: '127.0.0.1', COVEL_METRICS_PORT: String(apiMetricsPort) },
        ready: /listening on/,
      },
      track,
    );
    const workers = await Promise.all(
      workerMetricsPorts.map((metricsPort, i) =>
        spawnProcess(
          {
            name: `worker w${i + 1}`,
            script: 'apps/worker/main.ts',
            env: {
              ...env,
              COVEL_WORKER_ID: `w${i + 1}`,
              COVEL_WORKER_CONCURRENCY: String(spec.concurrency),
              COVEL_HOST: '127.0.0.1',
              COVEL_METRICS_PORT: String(metricsPort),
            },
            ready: /ready/,
          },
          track,
        ),
      ),
    );
    const metricsUrl = (p: number) => `http://127.0.0.1:${p}/metrics`;
    log(`  database ${databaseName}, queue prefix ${prefix}, emulator ${emulatorUrl} (${spec.latencyMs} ms), api :${port}, ${spec.workers} worker(s)`);
    const [first] = tenants;
    return {
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: first.apiKey,
      tenantId: first.id,
      tenants,
      databaseName,
      databaseUrl,
      api,
      workers,
      emulator,
      emulatorHost: new URL(emulatorUrl).host,
      metricsUrls: { api: metricsUrl(apiMetricsPort), workers: workerMetricsPorts.map(metricsUrl) },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The parent's environment, minus anything that would point the processes elsewhere, plus `env`. */
function processEnv(env: Record<string, string>): Record<string, string> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && !/^(COVEL_|DATABASE_URL$|REDIS_URL$)/.test(e[0])),
  );
  // no real provider key: every model call goes to the emulator
  return { ...inherited, OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', GEMINI_API_KEY: '', ...env };
}

async function migrateWithTenants(request: { databaseUrl: string; names: readonly string[]; keyPepper: string | null }): Promise<BenchTenant[]> {
  const { databaseUrl, names } = request;
  const database = await openDatabase({ kind: 'postgres', url: databaseUrl, poolSize: 1 });
  try {
    await migrateToLatest(database.db);
    const store = new TenantStore(database.db, { pepper: request.keyPepper });
    const tenants: BenchTenant[] = [];
    for (const name of names) {
      const { tenant, apiKey } = await store.create(name);
      tenants.push({ id: tenant.id, name: tenant.name, apiKey });
    }
    return tenants;
  } finally {
    await database.close();
  }
}

async function dropDatabase(name: string) {
  const admin = new Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${name} with (force)`);
  } finally {
    await admin.end();
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
