import { delimiter, join, resolve } from 'node:path';
import { z } from 'zod';
import { APP_ROLE_PATTERN, DEFAULT_PROJECTION_IDLE_DELAY_MS, DEFAULT_QUARANTINE_AFTER } from '../../events';
import { apiKeyWeakness } from './api-key-strength';
import { ConfigError, configErrorOf, dataDirOf, EngineLocationEnv } from '../../engine-client';
import { SHARED_PROMPTS_DIR } from '../../plugins-sdk';
import { LOG_FORMATS, LOG_LEVELS, secretValues, type LogSettings } from '../logging';

/** A turn's default deadline (`COVEL_TURN_DEADLINE_MS`): 3 minutes. */
export const DEFAULT_TURN_DEADLINE_MS = 180_000;
/** `COVEL_SHUTDOWN_GRACE_MS`: the whole stop (grace, hand-back, closing) fits Docker's 10 s before its SIGKILL. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 7_000;

/** The longest turn deadline (24 h): Node's timers fire at once past 2^31-1 ms, which would fail every call. */
export const MAX_TURN_DEADLINE_MS = 86_400_000;

/** The default bound of uncompacted messages a turn reads (`COVEL_HISTORY_MESSAGE_LIMIT`). */
export const DEFAULT_HISTORY_MESSAGE_LIMIT = 2_000;

const emptyAsUnset = (v: unknown) => (v === '' ? undefined : v);

/** An optional API key setting: unset when empty, else it must pass the strength check. */
const strongApiKey = z.preprocess(
  emptyAsUnset,
  z
    .string()
    .optional()
    .superRefine((key, ctx) => {
      const weakness = key === undefined ? null : apiKeyWeakness(key);
      if (weakness) ctx.addIssue({ code: 'custom', message: weakness });
    }),
);

/** `.meta({ description })` of a variable: docs/configuration.md is generated from these (`npm run docs:config`). */
const about = (description: string) => ({ description });

/**
 * Every environment variable the engine reads (API, workers, `npm start`, the tools). Each has a
 * description: docs/configuration.md's table is generated from this schema, and a unit test fails
 * when the page is stale or a variable read in code is missing from it.
 */
export const EngineEnv = z.object({
  PORT: EngineLocationEnv.PORT,
  COVEL_HOST: z
    .preprocess(emptyAsUnset, z.union([z.ipv4(), z.ipv6(), z.hostname()], { error: 'an IP address or a host name' }).default('127.0.0.1'))
    .meta(
      about(
        "Address the HTTP API (and a worker's metrics listener) binds to: loopback unless a deployment opens it (docker-compose: 0.0.0.0 in the container).",
      ),
    ),
  COVEL_BOOTSTRAP_API_KEY: strongApiKey.meta(
    about(
      'Creates a tenant with this API key at start-up (compose, CI). Printable ASCII, at least 32 characters and about 128 bits (length × log2 of the character classes used), no repeated character or pattern, e.g. `openssl rand -hex 32`; a weak key stops start-up naming the variable.',
    ),
  ),
  COVEL_BOOTSTRAP_TENANT: z
    .preprocess(emptyAsUnset, z.string().optional())
    .meta(about('Name of the tenant `COVEL_BOOTSTRAP_API_KEY` creates (default `bootstrap`).')),
  COVEL_ADMIN_API_KEY: strongApiKey.meta(
    about(
      "The operator's key for the admin routes (tenants and their keys at `/admin/tenants`, the quarantined events at `/admin/quarantine`, the queue dashboard, the API's `/metrics`); not a tenant's. Same strength rules as `COVEL_BOOTSTRAP_API_KEY`, and must differ from it. Unset: no admin routes, and `/metrics` on `PORT` answers no one (use `COVEL_METRICS_PORT`).",
    ),
  ),
  COVEL_KEY_PEPPER: strongApiKey.meta(
    about(
      "The server-side secret tenants' API keys are hashed with (HMAC-SHA-256); keep it out of the database (a secret store, the environment). Same strength rules as `COVEL_BOOTSTRAP_API_KEY`. Unset: one generated at the first start and kept in the database (`key_pepper`), which every process then shares. Changing it makes every key made before unknown (keys migrated from before 0024 and not used since keep working: a first use makes them HMACs).",
    ),
  ),
  COVEL_QUEUE_DASHBOARD: z
    .preprocess(emptyAsUnset, z.enum(['on', 'off'], { error: 'on or off' }).default('off'))
    .meta(about('bull-board at `/admin/queues` behind `COVEL_ADMIN_API_KEY`; needs `REDIS_URL` (BullMQ).')),
  COVEL_METRICS_PORT: z
    .preprocess(emptyAsUnset, z.coerce.number({ error: 'a port number' }).int().min(1).max(65535).optional())
    .meta(
      about(
        "A separate `GET /metrics` listener (on `COVEL_HOST`) of a worker (`npm run start:worker`), of the API (`npm run start:api`) and of `npm start`: no key asked there, so keep that port off the public network. Unset: none; the API's `/metrics` on `PORT` needs `COVEL_ADMIN_API_KEY` (Bearer) either way.",
      ),
    ),
  DATABASE_URL: z
    .preprocess(emptyAsUnset, z.string().url().optional())
    .meta(about('PostgreSQL, as the app role. Unset: the embedded PGlite database in `COVEL_DATA_DIR`.')),
  COVEL_MIGRATION_DATABASE_URL: z
    .preprocess(emptyAsUnset, z.string().url().optional())
    .meta(about("The owner role's URL: migrations (and the app role's grants) run through it at start-up and in `npm run migrate`. Needs `DATABASE_URL`.")),
  COVEL_APP_ROLE: z
    .preprocess(emptyAsUnset, z.string().regex(APP_ROLE_PATTERN, 'a plain SQL identifier').optional())
    .meta(about('The role `DATABASE_URL` connects as: granted what the API and workers need after migrating.')),
  REDIS_URL: z.preprocess(emptyAsUnset, z.string().url().optional()).meta(about('Redis for BullMQ and the delta bus. Unset: the in-process queue and bus.')),
  COVEL_DATA_DIR: EngineLocationEnv.COVEL_DATA_DIR,
  COVEL_QUEUE_PREFIX: z.string().default('covel').meta(about("Prefix of the BullMQ queues' and the delta bus's Redis keys.")),
  COVEL_WORKER_CONCURRENCY: z.coerce.number().int().positive().default(8).meta(about('Turn steps and runtime calls each a process runs at once.')),
  COVEL_SCHEDULER_WINDOW: z
    .preprocess(emptyAsUnset, z.coerce.number({ error: 'a whole number' }).int().positive().optional())
    .meta(
      about(
        "Fair scheduling: executions admitted to the turn queue at once across tenants; the rest wait on their tenant's list, admitted round robin as others end. Unset: the total `COVEL_WORKER_CONCURRENCY` of the live workers. Larger lets a flood wait in front of other tenants; smaller idles workers. Set it alike on every process (API and workers): each admission applies the value of the process deciding it.",
      ),
    ),
  COVEL_TENANT_MAX_IN_FLIGHT: z
    .preprocess(emptyAsUnset, z.coerce.number({ error: 'a whole number' }).int().positive().optional())
    .meta(
      about(
        "A tenant's cap on executions in flight (admitted to the turn queue) when its settings give none. Unset: no cap but the window (one tenant alone may use every worker). Set it alike on every process (API and workers): each admission applies the value of the process deciding it.",
      ),
    ),
  COVEL_JOB_LOCK_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(5_000)
    .meta(about("BullMQ job lock, renewed every half; a killed worker's job is taken over after it.")),
  COVEL_STALLED_INTERVAL_MS: z.coerce.number().int().positive().default(2_000).meta(about('How often a worker moves jobs whose lock expired back to wait.')),
  COVEL_SHUTDOWN_GRACE_MS: z.coerce
    .number()
    .int()
    .nonnegative()
    .default(DEFAULT_SHUTDOWN_GRACE_MS)
    .meta(
      about(
        "On SIGTERM or SIGINT: how long the jobs running in this process may take to end, once it has stopped taking new ones. Past it, each running model call is aborted and its job handed back (run again by another worker, or by this one's next start; nothing recorded twice). Keep it a few seconds under your container's stop timeout (Docker's is 10 s).",
      ),
    ),
  COVEL_SWEEP_INTERVAL_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(2_000)
    .meta(about("How often each worker's sweeper looks for stalled pending executions.")),
  COVEL_SWEEP_STALLED_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(5_000)
    .meta(about('A pending execution with no progress for this long (database clock) is enqueued again by the sweeper.')),
  COVEL_PROJECTION_QUARANTINE_AFTER: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000)
    .default(DEFAULT_QUARANTINE_AFTER)
    .meta(
      about(
        'Failed attempts at one event (retried with backoff from 1 s, doubling) after which an async projection (trace_events, prefix_reports, usage) skips it: the event is quarantined (`GET /admin/quarantine`, `npm run quarantine`), `/health` is `degraded` until an operator acknowledges it, and the shard goes on. Transient failures (SQLSTATE classes 08, 40, 53, 57, 58, the database unreachable) are retried and never count.',
      ),
    ),
  COVEL_PROJECTION_IDLE_DELAY_MS: z.coerce
    .number()
    .int()
    .min(10)
    .max(10_000)
    .default(DEFAULT_PROJECTION_IDLE_DELAY_MS)
    .meta(
      about(
        "How long a worker's async projector (trace_events, prefix_reports, usage) waits after an append's notification before it applies the log: the appends of a burst gather meanwhile and share one transaction (for every shard with work). Shorter: the traces, prefix reports and usage (and the budget read from it) are current sooner, at more transactions per turn under a trickle of turns; longer: fewer, larger transactions. Without notifications (a failed LISTEN) it is the poll interval.",
      ),
    ),
  COVEL_DB_POOL_SIZE: z.coerce.number().int().positive().default(10).meta(about('PostgreSQL connections per process.')),
  COVEL_EMULATOR_URL: z
    .preprocess(emptyAsUnset, z.string().optional())
    .meta(about('One shared provider emulator for every worker (the load bench sets it); unset: each process starts its own on a loopback port.')),
  COVEL_EMULATOR_DELAY_MS: z.coerce
    .number()
    .int()
    .nonnegative()
    .default(0)
    .meta(about('The emulator the process starts waits this long before it answers a model call.')),
  COVEL_EMULATOR_CHUNK_DELAY_MS: z.coerce
    .number()
    .int()
    .nonnegative()
    .default(0)
    .meta(about('The emulator the process starts waits this long between streamed chunks.')),
  COVEL_LLM_CONFIG: z.string().optional().meta(about('The model slots file; default `llm.toml` in the repository (keys below).')),
  COVEL_PLUGINS_DIR: z
    .string()
    .optional()
    .meta(about('Replaces the built-in plugins folder `plugins/` (tests use it); to add plugins to the built-ins use `COVEL_PLUGINS`.')),
  COVEL_PLUGINS: z
    .preprocess(emptyAsUnset, z.string().optional())
    .meta(
      about(
        "More plugin folders loaded beside the built-ins, separated by `:` (`;` on Windows): each is one plugin (it holds a `PLUGIN.md`) or a folder of plugins. A plugin id found twice stops start-up naming both folders. A plugin outside the repository resolves packages from its own folder first, then from the engine's `node_modules`.",
      ),
    ),
  COVEL_WORLDS_DIR: z.string().optional().meta(about('The worlds sessions can start in; default `worlds/`.')),
  COVEL_PROMPTS_DIR: z
    .preprocess(emptyAsUnset, z.string().optional())
    .meta(
      about(
        "Replaces the shared prompt templates' directory (`prompts/server`: world generation, lore repair) and nothing else; plugins keep their own. It must hold each template in English or as the default file (`<name>.md`), else start-up stops naming the paths tried; a locale without its own file falls back within it.",
      ),
    ),
  COVEL_HISTORY_MESSAGE_LIMIT: z.coerce
    .number()
    .int()
    .positive()
    .default(DEFAULT_HISTORY_MESSAGE_LIMIT)
    .meta(
      about(
        "Most uncompacted messages a session's turn reads. A session reports `history.state` `warning` from 80 % of it (`GET /v1/sessions/:id`, the inspector) and past it every turn fails: `HISTORY_NEEDS_COMPACTION` without a compaction provider (add `history-compaction` to the session's plugins), `HISTORY_TOO_LONG` with one.",
      ),
    ),
  COVEL_WORLD_GENERATION_REPAIR_ROUNDS: z.coerce
    .number()
    .int()
    .min(0)
    .max(10)
    .default(2)
    .meta(
      about(
        "World creation from a description (`POST /v1/worlds/generate`): the most repair rounds after the first draft when the model's world fails validation (each a lore repair or the draft asked again with the problems). Recorded with each job when it is asked.",
      ),
    ),
  COVEL_WORLD_GENERATION_MAX_OUTPUT_TOKENS: z.coerce
    .number()
    .int()
    .min(256)
    .max(1_000_000)
    .default(16_000)
    .meta(
      about(
        "Output limit of each world generation call, in tokens (a whole world is longer than a turn: the slot's `maxOutputTokens` is not used). The slot's model must accept it. Recorded with each job when it is asked.",
      ),
    ),
  COVEL_WORKER_ID: z.string().optional().meta(about("This worker's id in the executions it claims; default: host name, pid and a random suffix.")),
  COVEL_TURN_DEADLINE_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(MAX_TURN_DEADLINE_MS, { error: `at most ${MAX_TURN_DEADLINE_MS} (24 h)` })
    .default(DEFAULT_TURN_DEADLINE_MS)
    .meta(
      about(
        "How long a turn's job attempt may wait on its model, counted on the worker's own monotonic clock from the attempt's first model call (time queued, in a database outage, before a restart or waiting for a resume does not count): past it the running call is aborted and the turn fails with `TURN_DEADLINE` (not retried), and the session takes its next input. At most 86400000 (24 h). Each call also has its slot's deadlines (`firstByteTimeoutMs`, `idleTimeoutMs`, `totalTimeoutMs` in `llm.toml`).",
      ),
    ),
  COVEL_PLUGIN_HANDLER_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(5_000)
    .meta(about("How long a plugin's extension handler or hook may take before its runtime fails.")),
  COVEL_PLUGIN_BLOCKING_WARN_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(200)
    .meta(
      about(
        'A plugin handler, hook, tool or function runtime whose synchronous code runs longer than this is logged as a warning naming the plugin: meanwhile nothing else in the process runs (with `npm start`, the HTTP API does not answer).',
      ),
    ),
  COVEL_STREAMS_PER_TENANT: z.coerce
    .number()
    .int()
    .positive()
    .default(500)
    .meta(
      about('Event streams (`GET /v1/sessions/:id/events`) one tenant may hold open at once on one API process; the next one is a 429 `TOO_MANY_STREAMS`.'),
    ),
  COVEL_STREAMS_PER_KEY: z.coerce
    .number()
    .int()
    .positive()
    .default(250)
    .meta(about('Event streams one API key may hold open at once on one API process (429 `TOO_MANY_STREAMS` above it).')),
  COVEL_RATE_LIMIT_PER_SECOND: z.coerce
    .number()
    .min(0)
    .max(1_000_000)
    .default(1_000)
    .meta(
      about(
        "A tenant's default request rate on `/v1` (token bucket refill per second; a tenant's own `requestsPerSecond` overrides it): over it, 429 `RATE_LIMITED` with `Retry-After`. 0: no rate limit unless a tenant's limits set one. Shared by every API process through Redis with `REDIS_URL`.",
      ),
    ),
  COVEL_RATE_LIMIT_BURST: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(5_000)
    .meta(about("A tenant's default bucket capacity: requests it may make at once before the rate applies (a tenant's own `burst` overrides it).")),
  COVEL_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(262_144)
    .meta(
      about(
        'Largest request body the API reads, in bytes after decompression (413 above it). 256 KiB: a 16,000-character input written entirely as `\\uXXXX` escape pairs is 192,000 bytes of JSON.',
      ),
    ),
  COVEL_HTTP_HEADERS_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(600_000)
    .default(20_000)
    .meta(about("How long the API waits for a request's headers (408 and the connection closed after it); at most `COVEL_HTTP_REQUEST_TIMEOUT_MS`.")),
  COVEL_HTTP_REQUEST_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(3_600_000)
    .default(120_000)
    .meta(
      about(
        'How long the API waits to receive a whole request, headers and body (408 and the connection closed after it). Only the receiving: a long answer (an event stream, a long-poll) is not cut by it.',
      ),
    ),
  COVEL_HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(600_000)
    .default(5_000)
    .meta(about('How long an idle keep-alive connection to the API stays open after an answer; above a load balancer, set it longer than its idle timeout.')),
  COVEL_HTTP_MAX_CONNECTIONS: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(10_000)
    .meta(
      about(
        "Most connections the API holds open at once (event streams included); one more is closed as it is accepted. Keep it under the process's open-file limit (`ulimit -n`).",
      ),
    ),
  COVEL_LOG_FORMAT: z
    .preprocess(emptyAsUnset, z.enum(LOG_FORMATS).optional())
    .meta(
      about('`json` (one JSON object a line) or `pretty` (readable lines); default: `pretty` on the embedded default (no `DATABASE_URL`), `json` otherwise.'),
    ),
  COVEL_LOG_LEVEL: z.preprocess(emptyAsUnset, z.enum(LOG_LEVELS).default('info')).meta(about('The lowest level logged.')),
  COVEL_LOG_PLAYER_TEXT: z
    .preprocess(emptyAsUnset, z.enum(['0', '1', 'false', 'true'], { error: 'one of 0, 1, false, true' }).default('0'))
    .meta(about('Debugging only: log player and model text (text fields, error messages) and keep error messages in spans. Secrets stay redacted.')),
});

export type EngineConfig = ReturnType<typeof loadConfig>;

/**
 * What a start logs as a warning about its configuration (none of it stops the start): on
 * PostgreSQL without `COVEL_KEY_PEPPER`, the keys' pepper is kept in the same database as their hashes.
 */
export function configWarnings(config: EngineConfig): string[] {
  const warnings: string[] = [];
  if (config.database.kind === 'postgres' && !config.keyPepper)
    warnings.push(
      'COVEL_KEY_PEPPER is not set: the API keys are hashed with a pepper kept in the same PostgreSQL database as their hashes, so a copy of the database is enough to test key guesses; set it from a secret store (see docs/operations.md)',
    );
  return warnings;
}

const repoRoot = resolve(__dirname, '..', '..', '..');

/** Reads the process environment into one validated config. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env) {
  const parsed = EngineEnv.safeParse(env);
  if (!parsed.success) throw configErrorOf(parsed.error.issues);
  const e = parsed.data;
  if (e.COVEL_MIGRATION_DATABASE_URL && !e.DATABASE_URL) {
    throw new ConfigError([{ path: 'COVEL_MIGRATION_DATABASE_URL', message: 'needs DATABASE_URL (the app role): migrations by the owner are for PostgreSQL' }]);
  }
  if (e.COVEL_ADMIN_API_KEY !== undefined && e.COVEL_ADMIN_API_KEY === e.COVEL_BOOTSTRAP_API_KEY) {
    throw new ConfigError([{ path: 'COVEL_ADMIN_API_KEY', message: "must differ from COVEL_BOOTSTRAP_API_KEY (a tenant's key never opens the admin routes)" }]);
  }
  if (e.COVEL_QUEUE_DASHBOARD === 'on' && !e.COVEL_ADMIN_API_KEY) {
    throw new ConfigError([{ path: 'COVEL_QUEUE_DASHBOARD', message: 'needs COVEL_ADMIN_API_KEY (the dashboard is only behind the admin key)' }]);
  }
  if (e.COVEL_QUEUE_DASHBOARD === 'on' && !e.REDIS_URL) {
    throw new ConfigError([
      { path: 'COVEL_QUEUE_DASHBOARD', message: 'needs REDIS_URL: the dashboard shows BullMQ queues, the embedded in-process queue has none' },
    ]);
  }
  if (e.COVEL_HTTP_HEADERS_TIMEOUT_MS > e.COVEL_HTTP_REQUEST_TIMEOUT_MS) {
    throw new ConfigError([
      { path: 'COVEL_HTTP_HEADERS_TIMEOUT_MS', message: 'must be at most COVEL_HTTP_REQUEST_TIMEOUT_MS (the headers are part of the request)' },
    ]);
  }
  const dataDir = dataDirOf(e.COVEL_DATA_DIR);
  return {
    port: e.PORT,
    bodyLimitBytes: e.COVEL_BODY_LIMIT_BYTES,
    /** The API's HTTP server: how long it waits for a request's headers and whole request, keeps an idle connection, and how many it holds. */
    http: {
      headersTimeoutMs: e.COVEL_HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.COVEL_HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: e.COVEL_HTTP_KEEP_ALIVE_TIMEOUT_MS,
      maxConnections: e.COVEL_HTTP_MAX_CONNECTIONS,
    },
    /** Open session event streams per tenant and per API key, each API process (429 above). */
    streams: { perTenant: e.COVEL_STREAMS_PER_TENANT, perKey: e.COVEL_STREAMS_PER_KEY },
    /** A tenant's default limits (its `tenant.limits-changed@1` settings override them): the request rate on /v1. */
    limits: { requestsPerSecond: e.COVEL_RATE_LIMIT_PER_SECOND, burst: e.COVEL_RATE_LIMIT_BURST },
    host: e.COVEL_HOST,
    /** A tenant with this key is created at start-up (compose, CI); checked for strength above. */
    bootstrapApiKey: e.COVEL_BOOTSTRAP_API_KEY ?? null,
    /** The operator's key for the admin routes (quarantined events, the queue dashboard); null: none. */
    adminApiKey: e.COVEL_ADMIN_API_KEY ?? null,
    /** The pepper of the API keys' HMAC; null: the one kept in the database (libs/events loadKeyPepper). */
    keyPepper: e.COVEL_KEY_PEPPER ?? null,
    /** bull-board at /admin/queues (checked above: needs the admin key and REDIS_URL). */
    queueDashboard: e.COVEL_QUEUE_DASHBOARD === 'on',
    /** A separate metrics listener port (start:worker, start:api, npm start); null: none. */
    metricsPort: e.COVEL_METRICS_PORT ?? null,
    database: e.DATABASE_URL
      ? ({
          kind: 'postgres',
          url: e.DATABASE_URL,
          poolSize: e.COVEL_DB_POOL_SIZE,
          migrationUrl: e.COVEL_MIGRATION_DATABASE_URL,
          appRole: e.COVEL_APP_ROLE,
        } as const)
      : // no dataDir: in memory (the plugin contract-test harness sets that; loadConfig always gives one)
        ({ kind: 'pglite', dataDir: join(dataDir, 'pglite') } as { readonly kind: 'pglite'; readonly dataDir?: string }),
    redisUrl: e.REDIS_URL ?? null,
    dataDir,
    queuePrefix: e.COVEL_QUEUE_PREFIX,
    worker: {
      concurrency: e.COVEL_WORKER_CONCURRENCY,
      lockDurationMs: e.COVEL_JOB_LOCK_MS,
      stalledIntervalMs: e.COVEL_STALLED_INTERVAL_MS,
      id: e.COVEL_WORKER_ID,
      turnDeadlineMs: e.COVEL_TURN_DEADLINE_MS,
    },
    /** Fair scheduling across tenants: the turn queue's window (null: the live workers' total concurrency) and the default tenant cap (null: none). */
    scheduler: { window: e.COVEL_SCHEDULER_WINDOW ?? null, tenantMaxInFlight: e.COVEL_TENANT_MAX_IN_FLIGHT ?? null },
    /** The async projector: failed attempts at one event before it is quarantined; its pause after a notification. */
    projector: { quarantineAfter: e.COVEL_PROJECTION_QUARANTINE_AFTER, idleDelayMs: e.COVEL_PROJECTION_IDLE_DELAY_MS },
    sweep: { intervalMs: e.COVEL_SWEEP_INTERVAL_MS, stalledAfterMs: e.COVEL_SWEEP_STALLED_MS },
    /** On SIGTERM/SIGINT: how long running jobs may take before they are handed back (apps/process-lifecycle.ts). */
    shutdown: { graceMs: e.COVEL_SHUTDOWN_GRACE_MS },
    emulator: { responseDelayMs: e.COVEL_EMULATOR_DELAY_MS, chunkDelayMs: e.COVEL_EMULATOR_CHUNK_DELAY_MS },
    llmConfigFile: resolve(e.COVEL_LLM_CONFIG ?? join(repoRoot, 'llm.toml')),
    plugins: { handlerTimeoutMs: e.COVEL_PLUGIN_HANDLER_TIMEOUT_MS, blockingWarnMs: e.COVEL_PLUGIN_BLOCKING_WARN_MS },
    pluginsDir: resolve(e.COVEL_PLUGINS_DIR ?? join(repoRoot, 'plugins')),
    /** `COVEL_PLUGINS`: more plugin folders, loaded with those of `pluginsDir`. */
    extraPluginDirs: (e.COVEL_PLUGINS ?? '')
      .split(delimiter)
      .filter((d) => d.trim() !== '')
      .map((d) => resolve(d)),
    /** The engine's own folder: a plugin outside it falls back to its `node_modules`. */
    engineRoot: repoRoot,
    worldsDir: resolve(e.COVEL_WORLDS_DIR ?? join(repoRoot, 'worlds')),
    /** Most uncompacted messages a turn reads (the history read's bound; sessions report their use of it). */
    historyMessageLimit: e.COVEL_HISTORY_MESSAGE_LIMIT,
    /** World creation from a description: what each job may take (recorded with the job). */
    worldGeneration: { repairRounds: e.COVEL_WORLD_GENERATION_REPAIR_ROUNDS, maxOutputTokens: e.COVEL_WORLD_GENERATION_MAX_OUTPUT_TOKENS },
    /** The shared template root for sharedPromptLoader({ root }) (spec §6). */
    promptsDir: resolve(e.COVEL_PROMPTS_DIR ?? SHARED_PROMPTS_DIR),
    log: {
      format: e.COVEL_LOG_FORMAT ?? (e.DATABASE_URL ? 'json' : 'pretty'),
      level: e.COVEL_LOG_LEVEL,
      playerText: e.COVEL_LOG_PLAYER_TEXT === '1' || e.COVEL_LOG_PLAYER_TEXT === 'true',
      /** Values no log line may contain (provider keys, the bootstrap key, URL passwords). */
      secrets: secretValues(env),
    } satisfies LogSettings & { secrets: readonly string[] },
    env,
  };
}
