import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import IORedis from 'ioredis';
import { sql } from 'kysely';
import { Client } from 'pg';
import { EngineMetrics, installIoCounters, ioCounts } from '../../libs/engine';
import { openDatabase, pgCounts } from '../../libs/events';
import { providerFetch } from '../../libs/providers';
import { openMonitor } from '../support/redis-monitor';
import { startRedisChild } from '../support/redis-server';
import { createTestDatabase, PG_ADMIN_URL } from '../support/stack';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `after − before` per key, keys with 0 left out. */
function delta(before: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, n] of after) if (n - (before.get(k) ?? 0) > 0) out[k] = n - (before.get(k) ?? 0);
  return out;
}

/**
 * The engine's round-trip counters (`covel_redis_commands_total`, `covel_pg_statements_total`,
 * `covel_pg_transactions_total`, `covel_http_requests_total`) agree with what the servers saw:
 * Redis MONITOR for a known sequence of commands (plain, a pipeline, a MULTI, a script, a blocking
 * pop), PostgreSQL's pg_stat_database for a known sequence of statements and transactions.
 */
describe('round-trip counters (real Redis and PostgreSQL)', () => {
  beforeAll(() => installIoCounters());

  it('counts every Redis command as MONITOR shows it: pipelines, MULTI/EXEC, EVALSHA, BZPOPMIN', async () => {
    // a private server: MONITOR on the shared one also streams other suites' and benches' commands, and
    // one arriving before ioredis has seen MONITOR's own reply breaks its command queue
    const redis = await startRedisChild();
    const key = `covel-test-counts-${randomUUID()}`;
    const client = new IORedis(redis.url);
    client.defineCommand('bump', { numberOfKeys: 1, lua: "return redis.call('incr', KEYS[1])" });
    const watcher = new IORedis(redis.url);
    const monitor = await openMonitor(watcher);
    try {
      await client.ping(); // connected and ready: the handshake is not part of the sequence
      await (client as IORedis & { bump(k: string): Promise<number> }).bump(`${key}:warm`); // the script known to Redis (EVAL at most once)
      const port = client.stream.localPort;
      const seen = new Map<string, number>();
      const markers: string[] = [];
      monitor.on('monitor', (_time: string, args: string[], source: string) => {
        if (!source.endsWith(`:${port}`)) return; // other clients of this Redis (other tests, other benches)
        const name = String(args[0]).toLowerCase();
        if (name === 'echo') markers.push(args[1]);
        else if (markers.includes('start')) seen.set(name, (seen.get(name) ?? 0) + 1);
      });
      // the monitor's lines arrive after the answers: a marker before and after the sequence, each waited for
      const mark = async (marker: string) => {
        await client.echo(marker);
        while (!markers.includes(marker)) await sleep(20);
      };
      await mark('start');
      const before = ioCounts().redisCommands;

      await client.set(key, '1');
      await client.get(key);
      await client.pipeline().incr(key).incr(key).get(key).exec();
      await client.multi().incr(key).rpush(`${key}:list`, 'a').pexpire(`${key}:list`, 10_000).exec();
      await (client as IORedis & { bump(k: string): Promise<number> }).bump(key);
      await client.bzpopmin(`${key}:zset`, 0.01);
      await client.del(key, `${key}:list`, `${key}:warm`);
      const counted = delta(before, ioCounts().redisCommands);

      await mark('end');
      expect(counted).toEqual(Object.fromEntries(seen));
      expect(counted).toEqual({ set: 1, get: 2, incr: 3, multi: 1, rpush: 1, pexpire: 1, exec: 1, evalsha: 1, bzpopmin: 1, del: 1 });
    } finally {
      monitor.disconnect();
      watcher.disconnect();
      client.disconnect();
      await redis.kill();
    }
  });

  it("counts the commands of the engine's first Redis client in a process that had not loaded ioredis (the counters hook it when it loads)", async () => {
    // in a fresh process: this file has loaded ioredis already, so here the hook went in at once
    const redis = await startRedisChild();
    try {
      const script = [
        "const { installIoCounters, ioCounts } = require('./libs/engine');",
        'installIoCounters();',
        "if (Object.keys(require.cache).some((f) => f.includes('/node_modules/ioredis/'))) throw new Error('ioredis loaded before the first client');",
        "const client = require('./libs/engine/redis/load-ioredis').redisClient(process.env.URL, {});",
        "client.set('counted', '1').then(() => client.get('counted')).then(async () => {",
        '  const counts = Object.fromEntries(ioCounts().redisCommands);',
        '  await client.quit();',
        '  process.stdout.write(JSON.stringify(counts));',
        '});',
      ].join('\n');
      const child = spawn(process.execPath, ['-r', './tools/register.js', '-e', script], {
        cwd: join(__dirname, '..', '..'),
        env: { ...process.env, URL: redis.url },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      const code = await new Promise((resolve) => child.once('exit', resolve));
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      expect(JSON.parse(stdout)).toMatchObject({ set: 1, get: 1 });
    } finally {
      await redis.kill();
    }
    // a child that compiles what its transform cache lacks: seconds on a busy machine
  }, 60_000);

  it('counts PostgreSQL transactions as pg_stat_database does (xact_commit + xact_rollback), and every statement', async () => {
    const database = await createTestDatabase();
    const admin = new Client({ connectionString: PG_ADMIN_URL }); // on another database: its own transactions are not counted there
    await admin.connect();
    const opened = await openDatabase({ kind: 'postgres', url: database.url, poolSize: 1 });
    try {
      const xacts = async () => {
        const { rows } = await admin.query<{ n: string }>('select xact_commit + xact_rollback as n from pg_stat_database where datname = $1', [database.name]);
        return Number(rows[0].n);
      };
      // A backend keeps its counts to itself and flushes them to pg_stat_database at most once a
      // second, and when it exits — after the pool has already said it closed. A statement run after
      // pg_stat_force_next_flush() makes the backend flush before it answers, so the figure read
      // right after is exact: no waiting for a flush, and nothing else runs on this new database.
      const flushed = () => sql`select pg_stat_force_next_flush()`.execute(opened.db);
      await flushed(); // the connection made: its start-up is not part of the sequence
      const base = await xacts();
      const before = pgCounts();

      await sql`create table counted (n int)`.execute(opened.db); // autocommit: 1
      await opened.db.transaction().execute(async (trx) => {
        await sql`insert into counted values (1)`.execute(trx);
        await sql`insert into counted values (2)`.execute(trx);
      }); // 1
      await expect(
        opened.db.transaction().execute(async (trx) => {
          await sql`insert into counted values (3)`.execute(trx);
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back'); // 1 (rollback)
      await expect(sql`select 1 / (select count(*) - 2 from counted)`.execute(opened.db)).rejects.toThrow(/division by zero/); // 1 (failed)
      await sql`select count(*) from counted`.execute(opened.db); // 1
      await flushed(); // 1, and the backend's counts flushed before it answered
      const after = pgCounts();
      const seen = (await xacts()) - base;

      expect(after.transactions - before.transactions).toBe(6);
      expect(seen).toBe(6);
      expect(delta(before.statements, after.statements)).toEqual({
        'create table counted (n int)': 1,
        begin: 2,
        'insert into counted values (?)': 3,
        commit: 1,
        rollback: 1,
        'select ? / (select count(*) - ? from counted)': 1,
        'select count(*) from counted': 1,
        'select pg_stat_force_next_flush()': 1,
      });
    } finally {
      await opened.close();
      await admin.end();
      await database.drop();
    }
  });

  it("counts outbound HTTP requests by host (the OpenAI SDK's, sent by providerFetch, too), and exposes every count on the engine metrics", async () => {
    const server = createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const before = ioCounts().httpRequests.get(host) ?? 0;
      for (let i = 0; i < 3; i++) await (await fetch(`http://${host}/x`)).text();
      for (let i = 0; i < 2; i++) await (await providerFetch(`http://${host}/x`, { method: 'POST', body: '{}' })).text();
      expect((ioCounts().httpRequests.get(host) ?? 0) - before).toBe(5);
      const { body } = await new EngineMetrics().exposition();
      expect(body).toContain(`covel_http_requests_total{host="${host}"} 5`);
      expect(body).toMatch(/covel_redis_commands_total\{command="evalsha"\} \d+/);
      expect(body).toMatch(/covel_pg_transactions_total \d+/);
      expect(body).toContain('covel_pg_statements_total{statement="begin"}');
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
