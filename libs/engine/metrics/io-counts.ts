import type { Command } from 'ioredis';
import { Counter, type Registry } from './prom-client';
import { BoundedTally, pgCounts } from '../../events';
import { BoundedMemo } from '../../memo';
import { observeProviderFetches } from '../../providers';
import { whenIoRedisLoaded } from '../redis/load-ioredis';

/**
 * Process-wide counts of the engine's round trips besides PostgreSQL's (libs/events counts those):
 * Redis commands of every ioredis client of the process, BullMQ's included (ioredis loads at the
 * engine's first Redis client: a client the host's own code makes from an ioredis it loaded after
 * `installIoCounters` and before that is not counted), and outbound HTTP
 * requests by host (model calls among them). `installIoCounters` hooks them once per process;
 * `EngineMetrics` exposes them as `covel_redis_commands_total` and `covel_http_requests_total`.
 */
export interface IoCountsSnapshot {
  /** Commands written to Redis, by lower-case name: each inside a pipeline or MULTI (MULTI and EXEC too), a script's EVALSHA one. */
  redisCommands: ReadonlyMap<string, number>;
  /** fetch() calls and the provider SDKs' requests (`providerFetch`), by the URL's host (`host:port`). */
  httpRequests: ReadonlyMap<string, number>;
}

/** Redis command names are a fixed set; the bound only guards against a client sending odd ones. */
const MAX_COMMAND_LABELS = 256;
/** Hosts are the configured providers and services; the bound keeps a runaway caller from growing the labels. */
const MAX_HOST_LABELS = 64;

const redisCommands = new BoundedTally(MAX_COMMAND_LABELS);
const httpRequests = new BoundedTally(MAX_HOST_LABELS);
let installed = false;

export function ioCounts(): IoCountsSnapshot {
  return { redisCommands: redisCommands.snapshot(), httpRequests: httpRequests.snapshot() };
}

/**
 * Installs the counting hooks (again: nothing). Redis: `Command.prototype.toWritable`, which ioredis
 * calls exactly when it writes a command to the socket, directly or into a pipeline's batch (a
 * command queued while offline is counted when it is finally written, a resend again, as the
 * server sees it), hooked when ioredis loads (see `whenIoRedisLoaded`: a process that makes no Redis
 * client never loads it). HTTP: `globalThis.fetch` (install before an SDK that uses it is built: it may keep
 * the function it found), and each request the OpenAI SDK sends through `providerFetch`.
 */
export function installIoCounters(): void {
  if (installed) return;
  installed = true;
  // when ioredis loads (the engine requires it at the first Redis client it makes): before any command is written
  whenIoRedisLoaded(({ Command }) => {
    const proto = Command.prototype as unknown as { toWritable: (this: Command, socket: unknown) => unknown };
    const toWritable = proto.toWritable;
    proto.toWritable = function (this: Command, socket: unknown) {
      redisCommands.add(String(this.name).toLowerCase());
      return toWritable.call(this, socket);
    };
  });
  const fetch = globalThis.fetch;
  globalThis.fetch = (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    httpRequests.add(requestHost(input));
    return fetch(input, init);
  };
  // what providerFetch hands on to globalThis.fetch (a redirect, an option of undici's own) is counted there
  observeProviderFetches((url) => httpRequests.add(url.host));
}

function requestHost(input: Parameters<typeof fetch>[0]): string {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  // a process calls a few URLs again and again (a provider's endpoint per model call): each parsed once
  let host = hosts.get(url);
  if (host === undefined) {
    host = hostOf(url);
    hosts.set(url, host);
  }
  return host;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'unknown';
  }
}

/** `requestHost`'s answers for the latest URLs (a URL with a query of its own each time only pushes out the oldest). */
const hosts = new BoundedMemo<string, string>({ maxEntries: 256 });

/**
 * The process's round-trip counters on `registry`, read on scrape: `covel_redis_commands_total{command}`,
 * `covel_pg_statements_total{statement}`, `covel_pg_transactions_total`, `covel_http_requests_total{host}`.
 * Process-wide: several engines in one process each show the process's totals.
 */
export function registerIoCounters(registry: Registry): void {
  const tallied = (name: string, help: string, label: string, read: () => ReadonlyMap<string, number>) => {
    const counter: Counter<string> = new Counter({
      name,
      help,
      labelNames: [label],
      registers: [registry],
      collect: () => {
        counter.reset();
        for (const [value, n] of read()) counter.inc({ [label]: value }, n);
      },
    });
  };
  tallied(
    'covel_redis_commands_total',
    'Redis commands this process wrote, by command (each inside a pipeline or MULTI, MULTI and EXEC too; a script is one EVALSHA), every ioredis client',
    'command',
    () => ioCounts().redisCommands,
  );
  tallied(
    'covel_pg_statements_total',
    'PostgreSQL statements this process sent through its pools, by their first 60 characters (parameters as $n, numbers as ?; BEGIN and COMMIT included)',
    'statement',
    () => pgCounts().statements,
  );
  tallied(
    'covel_http_requests_total',
    'Outbound HTTP requests (fetch) of this process, by host (model calls among them)',
    'host',
    () => ioCounts().httpRequests,
  );
  const transactions: Counter = new Counter({
    name: 'covel_pg_transactions_total',
    help: 'PostgreSQL transactions this process made through its pools: BEGIN..COMMIT/ROLLBACK, and each statement outside one',
    registers: [registry],
    collect: () => {
      transactions.reset();
      transactions.inc(pgCounts().transactions);
    },
  });
}
