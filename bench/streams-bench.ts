import { randomBytes } from 'node:crypto';
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { request, type ClientRequest } from 'node:http';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { PlayClient } from '../apps/play/play-client';
import { deleteQueueKeys } from '../libs/engine';
import { migrateToLatest, openDatabase, TenantStore } from '../libs/events';
import { Cleanups } from './load/cleanups';
import { processCpuMs } from './load/cpu';
import { type BenchProcess, spawnProcess } from './load/processes';
import { benchKeyPepper, keyPepperEnv } from './load/stack';
import { formatTable } from './load/report';

const PG_ADMIN_URL = process.env.COVEL_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.COVEL_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

const USAGE = `npm run bench:streams -- [--streams 1000] [--sessions 250] [--turns 2] [--idle-s 30] [--label name]

Idle session event streams in PG mode (PostgreSQL + Redis): the API as \`npm run start:api\` runs it
(apps/api/main.ts with DATABASE_URL and REDIS_URL), a worker and the emulator to play --turns turns in
each of --sessions sessions (then stopped), then --streams streams opened round-robin on the sessions
(GET /v1/sessions/:id/events, no Last-Event-ID), left idle --idle-s seconds, and closed. Prints the API
process's CPU and RSS and writes bench/results/streams-<time>.json. Run it on two checkouts for a
before/after comparison (same machine, same arguments).`;

interface Phase {
  /** API process CPU in this phase, ms and % of one core. */
  cpuMs: number;
  cpuPercent: number;
  seconds: number;
  /** CPU of the bench database's PostgreSQL backends (those there at the start), ms. */
  postgresCpuMs: number;
  /** Transactions committed in the bench database (pg_stat_database.xact_commit, which a backend may report up to 10 s late). */
  transactions: number;
}

/** Reads, as the admin role, what the bench database's backends did. */
class DatabaseWatch {
  constructor(
    private readonly admin: Client,
    private readonly name: string,
  ) {}

  async backends(): Promise<number[]> {
    const { rows } = await this.admin.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1', [this.name]);
    return rows.map((r) => r.pid);
  }

  async transactions(): Promise<number> {
    const { rows } = await this.admin.query<{ n: string }>('select xact_commit as n from pg_stat_database where datname = $1', [this.name]);
    return Number(rows[0]?.n ?? 0);
  }
}

/** VmRSS of a process, in MiB. */
function rssMiB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

async function measure(pid: number, seconds: number, watch: DatabaseWatch): Promise<Phase> {
  const backends = await watch.backends();
  const startPg = new Map(backends.map((p) => [p, processCpuMs(p)]));
  const startXact = await watch.transactions();
  const start = processCpuMs(pid) ?? 0;
  const began = Date.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const elapsed = (Date.now() - began) / 1000;
  const cpuMs = (processCpuMs(pid) ?? 0) - start;
  // backends there at both ends (one that exited meanwhile cannot be read)
  let postgresCpuMs = 0;
  for (const [p, begin] of startPg) {
    const end = processCpuMs(p);
    if (begin !== null && end !== null) postgresCpuMs += Math.max(0, end - begin);
  }
  await new Promise((r) => setTimeout(r, 600)); // the statistics are flushed at most every 0.5 s (PostgreSQL 15+)
  const transactions = (await watch.transactions()) - startXact;
  return { cpuMs, cpuPercent: (cpuMs / (elapsed * 1000)) * 100, seconds: elapsed, postgresCpuMs, transactions };
}

/** One open stream: bytes and events received; `close` aborts it. */
interface Stream {
  status: number;
  bytes: number;
  events: number;
  req: ClientRequest;
}

function openStream(baseUrl: string, apiKey: string, sessionId: string): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${baseUrl}/v1/sessions/${sessionId}/events`,
      { headers: { authorization: `Bearer ${apiKey}`, accept: 'text/event-stream' } },
      (res) => {
        const stream: Stream = { status: res.statusCode ?? 0, bytes: 0, events: 0, req };
        res.on('data', (chunk: Buffer) => {
          stream.bytes += chunk.length;
          stream.events += chunk.toString('utf8').match(/(^|\n)id: /g)?.length ?? 0;
        });
        res.on('error', () => undefined);
        resolve(stream);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function main() {
  const { values } = parseArgs({
    options: {
      streams: { type: 'string', default: '1000' },
      sessions: { type: 'string', default: '250' },
      turns: { type: 'string', default: '2' },
      'idle-s': { type: 'string', default: '30' },
      label: { type: 'string', default: '' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const streamCount = Number(values.streams);
  const sessionCount = Number(values.sessions);
  const turns = Number(values.turns);
  const idleSeconds = Number(values['idle-s']);
  const progress = (line: string) => process.stderr.write(`${line}\n`);
  const cleanups = new Cleanups();
  cleanups.onSignals(progress);
  const tag = randomBytes(5).toString('hex');
  const databaseName = `covel_bench_streams_${tag}`;
  const prefix = `covel-bench-streams-${tag}`;
  const admin = new Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${databaseName}`);
  await admin.end();
  cleanups.add(async () => {
    const c = new Client({ connectionString: PG_ADMIN_URL });
    await c.connect();
    await c.query(`drop database if exists ${databaseName} with (force)`);
    await c.end();
  });
  cleanups.add(() => deleteQueueKeys(REDIS_URL, prefix));
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${databaseName}`;
  const databaseUrl = url.toString();
  const processes: BenchProcess[] = [];
  cleanups.add(async () => void (await Promise.all(processes.map((p) => p.stop()))));
  const open: Stream[] = [];
  cleanups.add(async () => open.forEach((s) => s.req.destroy()));
  try {
    const database = await openDatabase({ kind: 'postgres', url: databaseUrl, poolSize: 1 });
    await migrateToLatest(database.db);
    const keyPepper = benchKeyPepper();
    const { apiKey } = await new TenantStore(database.db, { pepper: keyPepper }).create('bench-streams');
    await database.close();
    const inherited = Object.fromEntries(
      Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && !/^(COVEL_|DATABASE_URL$|REDIS_URL$)/.test(e[0])),
    );
    const base = {
      ...inherited,
      OPENAI_API_KEY: '',
      ANTHROPIC_API_KEY: '',
      GEMINI_API_KEY: '',
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      COVEL_QUEUE_PREFIX: prefix,
      ...keyPepperEnv(keyPepper),
    };
    const track = (p: BenchProcess) => processes.push(p);
    const emulator = await spawnProcess(
      { name: 'emulator', script: 'bench/load/emulator-process.ts', env: { ...base, COVEL_EMULATOR_DELAY_MS: '0' }, ready: /emulator listening on/ },
      track,
    );
    const env = { ...base, COVEL_EMULATOR_URL: /listening on (\S+)/.exec(emulator.readyLine)![1] };
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    // the stream caps well above the bench's count (a build without them ignores the variables)
    const api = await spawnProcess(
      {
        name: 'api',
        script: 'apps/api/main.ts',
        env: {
          ...env,
          PORT: String(port),
          COVEL_HOST: '127.0.0.1',
          COVEL_STREAMS_PER_TENANT: String(streamCount * 2),
          COVEL_STREAMS_PER_KEY: String(streamCount * 2),
        },
        ready: /listening on/,
      },
      track,
    );
    const worker = await spawnProcess({ name: 'worker', script: 'apps/worker/main.ts', env: { ...env, COVEL_WORKER_CONCURRENCY: '8' }, ready: /ready/ }, track);
    const baseUrl = `http://127.0.0.1:${port}`;
    const client = new PlayClient(baseUrl, apiKey);
    progress(`bench:streams: ${sessionCount} sessions x ${turns} turns, then ${streamCount} idle streams for ${idleSeconds} s (api pid ${api.pid})`);
    const sessions: string[] = [];
    for (let i = 0; i < sessionCount; i += 25) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(25, sessionCount - i) }, async () => {
          const { id } = await client.createSession({ worldId: 'emberback' });
          for (let t = 0; t < turns; t++) {
            const { executionId } = await client.submit(id, `Look around, step ${t + 1}`);
            await client.waitFor(executionId, 120_000);
          }
          return id;
        }),
      );
      sessions.push(...batch);
      progress(`  ${sessions.length}/${sessionCount} sessions played`);
    }
    await worker.stop();
    await emulator.stop();
    await new Promise((r) => setTimeout(r, 3_000));
    const watcher = new Client({ connectionString: PG_ADMIN_URL });
    await watcher.connect();
    cleanups.add(() => watcher.end());
    const watch = new DatabaseWatch(watcher, databaseName);
    const rssBefore = rssMiB(api.pid);
    const quiet = await measure(api.pid, 5, watch);
    for (let i = 0; i < streamCount; i += 100) {
      open.push(
        ...(await Promise.all(
          Array.from({ length: Math.min(100, streamCount - i) }, (_, j) => openStream(baseUrl, apiKey, sessions[(i + j) % sessions.length])),
        )),
      );
    }
    const refused = open.filter((s) => s.status !== 200).length;
    const statuses = [...new Set(open.map((s) => s.status))].sort().join(', ');
    // 12 s: an idle backend reports its transactions up to 10 s late, so the idle phase counts its own
    progress(`  ${open.length - refused} streams open (${refused} refused); letting them settle 12 s`);
    const settle = await measure(api.pid, 12, watch);
    const rssOpen = rssMiB(api.pid);
    const bytesAtConnect = open.reduce((n, s) => n + s.bytes, 0);
    const eventsAtConnect = open.reduce((n, s) => n + s.events, 0);
    progress(`  idle ${idleSeconds} s`);
    const idle = await measure(api.pid, idleSeconds, watch);
    const rssIdle = rssMiB(api.pid);
    for (const s of open) s.req.destroy();
    progress('  closed; 10 s later');
    const afterClose = await measure(api.pid, 10, watch);
    const rssClosed = rssMiB(api.pid);
    const result = {
      name: 'streams',
      label: values.label,
      date: new Date().toISOString(),
      node: process.version,
      cores: cpus().length,
      cpu: cpus()[0]?.model ?? null,
      sessions: sessionCount,
      turnsPerSession: turns,
      streams: open.length,
      refused,
      statuses,
      eventsAtConnect,
      bytesAtConnect,
      quiet,
      settle,
      idle,
      afterClose,
      rssMiB: { before: rssBefore, open: rssOpen, idleEnd: rssIdle, afterClose: rssClosed },
    };
    const f = (n: number, d = 1) => n.toFixed(d);
    console.log(
      `\n${formatTable([
        ['phase', 'seconds', 'api CPU ms', 'api CPU % of a core', 'api RSS MiB (end)', 'postgres CPU ms', 'db transactions'],
        ...(
          [
            ['before streams', quiet, rssBefore],
            [`${open.length} streams open (settle)`, settle, rssOpen],
            [`${open.length} streams idle`, idle, rssIdle],
            ['after close', afterClose, rssClosed],
          ] as const
        ).map(([name, p, rss]) => [name, f(p.seconds), f(p.cpuMs, 0), f(p.cpuPercent), f(rss), f(p.postgresCpuMs, 0), String(p.transactions)]),
      ])}\n\nat connect: ${eventsAtConnect} events, ${(bytesAtConnect / 1024).toFixed(0)} KiB sent to ${open.length} streams; ${refused} refused (statuses: ${statuses})`,
    );
    const file = join(__dirname, 'results', `streams-${new Date().toISOString().replace(/:/g, '-')}.json`);
    mkdirSync(join(__dirname, 'results'), { recursive: true });
    writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
    console.log(`wrote ${file}`);
  } finally {
    await cleanups.runAll();
  }
}

main().catch((error) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});
