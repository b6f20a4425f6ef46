import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Client } from 'pg';
import { PlayClient } from '../../apps/play/play-client';
import { deleteQueueKeys } from '../../libs/engine';
import { migrateToLatest, openDatabase } from '../../libs/events';

const root = join(__dirname, '..', '..');
export const PG_ADMIN_URL = process.env.COVEL_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.COVEL_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A fresh PostgreSQL database for one test file, dropped afterwards (owned by `owner` when given). */
export async function createTestDatabase(options: { owner?: string } = {}): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const name = `covel_it_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}${options.owner ? ` owner ${options.owner}` : ''}`);
  await admin.end();
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async drop() {
      const c = new Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

/** `url` with another user name (the test server trusts loopback connections). */
export function urlAs(url: string, user: string): string {
  const u = new URL(url);
  u.username = user;
  u.password = '';
  return u.toString();
}

export interface TestRoles {
  owner: string;
  app: string;
  drop(): Promise<void>;
}

/** An owner role (migrations) and an app role (API, workers), random names; drop after the databases that use them. */
export async function createTestRoles(): Promise<TestRoles> {
  const tag = randomBytes(4).toString('hex');
  const owner = `covel_it_owner_${tag}`;
  const app = `covel_it_app_${tag}`;
  const admin = new Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`create role ${owner} login nosuperuser nocreatedb nocreaterole`);
    await admin.query(`create role ${app} login nosuperuser nocreatedb nocreaterole`);
  } finally {
    await admin.end();
  }
  return {
    owner,
    app,
    async drop() {
      const c = new Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      try {
        await c.query(`drop role if exists ${app}`);
        await c.query(`drop role if exists ${owner}`);
      } finally {
        await c.end();
      }
    },
  };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface ManagedProcess {
  name: string;
  child: ChildProcess;
  output(): string;
  /** Resolves when the process has exited. */
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts one of the apps as its own Node process and waits for its ready line. */
// a hang guard, not a speed check: a first embedded start (PGlite made and migrated) takes about 8 s on a
// quiet 2-core machine and was seen past 60 s under a loaded CI
export async function startApp(name: string, script: string, env: Record<string, string>, ready: RegExp, timeoutMs = 150_000): Promise<ManagedProcess> {
  const child = spawn(process.execPath, ['-r', './tools/register.js', script], {
    cwd: root,
    env: { ...process.env, OPENAI_API_KEY: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} not ready after ${timeoutMs} ms:\n${out}`)), timeoutMs);
    const check = () => {
      if (ready.test(out)) {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code}) before it was ready:\n${out}`));
    });
  });
  return {
    name,
    child,
    output: () => out,
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface Stack {
  api: ManagedProcess;
  workers: ManagedProcess[];
  client: PlayClient;
  apiKey: string;
  /** What the API and workers connect with (the app role with `separateRoles`). */
  databaseUrl: string;
  /** The owner role's URL with `separateRoles`, else the same as databaseUrl. */
  ownerUrl: string;
  /** The test server's superuser on this database. */
  adminUrl: string;
  env: Record<string, string>;
  baseUrl: string;
  startWorker(id: string, extraEnv?: Record<string, string>): Promise<ManagedProcess>;
  stop(): Promise<void>;
}

export interface StackOptions {
  workers: number;
  /** More environment for the API and every worker (e.g. COVEL_PLUGINS_DIR: both load the same plugins). */
  env?: Record<string, string>;
  /** More environment for the workers only. */
  workerEnv?: Record<string, string>;
  separateRoles?: boolean;
}

/** API + N worker processes on the real PostgreSQL and Redis (BullMQ), each test its own db and prefix. */
export async function startStack(options: StackOptions): Promise<Stack> {
  // separateRoles: an owner role migrates (npm run migrate, with the grants), the processes connect as the app role
  const roles = options.separateRoles ? await createTestRoles() : null;
  const database = await createTestDatabase({ owner: roles?.owner });
  const appUrl = roles ? urlAs(database.url, roles.app) : database.url;
  const ownerUrl = roles ? urlAs(database.url, roles.owner) : database.url;
  const prefix = `covel-it-${randomBytes(4).toString('hex')}`;
  const apiKey = `cvl_it_${randomBytes(16).toString('hex')}`;
  const port = await freePort();
  const env = {
    DATABASE_URL: appUrl,
    REDIS_URL,
    COVEL_QUEUE_PREFIX: prefix,
    COVEL_BOOTSTRAP_API_KEY: apiKey,
    PORT: String(port),
    ...options.env,
  };
  const started: ManagedProcess[] = [];
  try {
    // migrate once first, so the processes start on a ready schema: with separate roles through
    // `npm run migrate` (the owner migrates and grants: what app-role.test.ts proves), else in this
    // process (the same migrations, without a process of its own: about 2 s of CPU a stack)
    if (roles) {
      const migrateEnv = { ...env, COVEL_MIGRATION_DATABASE_URL: ownerUrl, COVEL_APP_ROLE: roles.app };
      const migrate = await startApp('migrate', 'tools/migrate.ts', migrateEnv, /applied|up to date/);
      await migrate.exited;
    } else {
      const open = await openDatabase({ kind: 'postgres', url: database.url, poolSize: 1 });
      try {
        await migrateToLatest(open.db);
      } finally {
        await open.close();
      }
    }
    const api = await startApp('api', 'apps/api/main.ts', env, /listening on/);
    started.push(api);
    const startWorker = async (id: string, extraEnv: Record<string, string> = {}) => {
      const w = await startApp(`worker ${id}`, 'apps/worker/main.ts', { ...env, COVEL_WORKER_ID: id, ...options.workerEnv, ...extraEnv }, /ready/);
      started.push(w);
      return w;
    };
    const workers = await Promise.all(Array.from({ length: options.workers }, (_, i) => startWorker(`w${i + 1}`)));
    const baseUrl = `http://127.0.0.1:${port}`;
    return {
      api,
      workers,
      client: new PlayClient(baseUrl, apiKey),
      apiKey,
      databaseUrl: appUrl,
      ownerUrl,
      adminUrl: database.url,
      env,
      baseUrl,
      startWorker,
      async stop() {
        await Promise.all(started.map((p) => p.stop()));
        await deleteQueueKeys(REDIS_URL, prefix);
        await database.drop();
        await roles?.drop();
      },
    };
  } catch (error) {
    await Promise.all(started.map((p) => p.stop()));
    await deleteQueueKeys(REDIS_URL, prefix).catch(() => undefined);
    await database.drop().catch(() => undefined);
    await roles?.drop().catch(() => undefined);
    throw error;
  }
}
