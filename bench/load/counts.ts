/**
 * Round trips per turn (issue 33): what the engine's processes counted (`covel_redis_commands_total`,
 * `covel_pg_statements_total`, `covel_pg_transactions_total`, `covel_http_requests_total` on each
 * process's /metrics), CPU ms and log bytes, divided by the committed turns; the top commands and
 * statements; the issue's targets. Pure: parsing, differences, arithmetic, tables (tested in
 * test/unit/bench-load-counts.test.ts); the scraping is in scrape.ts.
 */
import { formatTable } from './report';

/** One process's counters as read from its exposition text. */
export interface ProcessCounts {
  redis: Record<string, number>;
  pgStatements: Record<string, number>;
  pgTransactions: number;
  /** Outbound HTTP requests by host. */
  http: Record<string, number>;
}

export const emptyCounts = (): ProcessCounts => ({ redis: {}, pgStatements: {}, pgTransactions: 0, http: {} });

/** A label value of the exposition format: `\\`, `\"` and `\n` escaped. */
const unescape = (value: string) => value.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));

/** The round-trip counters of a Prometheus exposition text (other families are ignored). */
export function parseCounts(exposition: string): ProcessCounts {
  const counts = emptyCounts();
  for (const line of exposition.split('\n')) {
    const match =
      /^(covel_redis_commands_total|covel_pg_statements_total|covel_pg_transactions_total|covel_http_requests_total)(?:\{(\w+)="((?:[^"\\]|\\.)*)"\})? (\S+)$/.exec(
        line,
      );
    if (!match) continue;
    const [, name, , rawLabel, rawValue] = match;
    const value = Number(rawValue);
    if (!Number.isFinite(value)) continue;
    const label = rawLabel === undefined ? '' : unescape(rawLabel);
    if (name === 'covel_pg_transactions_total') counts.pgTransactions += value;
    else if (name === 'covel_redis_commands_total') counts.redis[label] = value;
    else if (name === 'covel_pg_statements_total') counts.pgStatements[label] = value;
    else counts.http[label] = value;
  }
  return counts;
}

const diffRecord = (before: Record<string, number>, after: Record<string, number>) =>
  Object.fromEntries(Object.entries(after).flatMap(([k, n]) => (n - (before[k] ?? 0) > 0 ? [[k, n - (before[k] ?? 0)]] : [])));

const addRecord = (a: Record<string, number>, b: Record<string, number>) => {
  const out = { ...a };
  for (const [k, n] of Object.entries(b)) out[k] = (out[k] ?? 0) + n;
  return out;
};

const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

/** What a process counted between two readings (a counter that went down, i.e. a restart, counts from 0). */
export function diffCounts(before: ProcessCounts, after: ProcessCounts): ProcessCounts {
  return {
    redis: diffRecord(before.redis, after.redis),
    pgStatements: diffRecord(before.pgStatements, after.pgStatements),
    pgTransactions: Math.max(0, after.pgTransactions - before.pgTransactions),
    http: diffRecord(before.http, after.http),
  };
}

export function addCounts(a: ProcessCounts, b: ProcessCounts): ProcessCounts {
  return {
    redis: addRecord(a.redis, b.redis),
    pgStatements: addRecord(a.pgStatements, b.pgStatements),
    pgTransactions: a.pgTransactions + b.pgTransactions,
    http: addRecord(a.http, b.http),
  };
}

/** A figure per turn for the API, the workers together, and both. */
export interface Split {
  api: number;
  workers: number;
  total: number;
}

/** One row of a breakdown: a command or a statement, per turn, by process group. */
export interface BreakdownRow extends Split {
  name: string;
}

/** Every round-trip figure of a run or a phase, per committed turn. */
export interface TurnCounts {
  turns: number;
  redisCommands: Split;
  pgStatements: Split;
  pgTransactions: Split;
  /** Outbound HTTP requests other than model calls (API ↔ workers and any other service). */
  httpBetweenProcesses: Split;
  /** Outbound HTTP requests to the emulator (each a model call). */
  modelCalls: Split;
  /** The bench's client → API: each turn's POST and its long-polls. */
  clientRequests: number;
  /** CPU ms (/proc utime + stime) of the API and the worker processes; the emulator apart. */
  cpuMs: Split & { emulator: number };
  /**
   * CPU ms of PostgreSQL: `all` its processes on the machine (others' load included), `benchDb` the
   * backends connected to the run's database only (what the engine's statements cost the server).
   * Absent in a result written before the figure existed.
   */
  pgCpuMs?: { all: number; benchDb: number };
  /** The run database's backends seen over the window (a total, not per turn): more than the pools hold means connections were closed and opened again. */
  pgBackends?: number;
  /** Bytes of the events appended: `octet_length(data::text) + octet_length(metadata::text)`, and `pg_column_size` of both (stored, after compression). */
  logBytes: { json: number; stored: number };
  /** Events appended. */
  logEvents: number;
  /** The top Redis commands and PostgreSQL statements, per turn (most first). */
  breakdown: { redis: BreakdownRow[]; pgStatements: BreakdownRow[] };
}

/** What `turnCounts` divides by the committed turns. */
export interface CountsInput {
  turns: number;
  api: ProcessCounts;
  /** Each worker's counts over the same window. */
  workers: readonly ProcessCounts[];
  /** The emulator's `host:port`: HTTP requests to it are model calls. */
  emulatorHost: string;
  clientRequests: number;
  cpuMs: { api: number; workers: number; emulator: number };
  /** PostgreSQL's CPU ms over the window (see `TurnCounts.pgCpuMs`); absent: 0. */
  pgCpuMs?: { all: number; benchDb: number };
  /** The run database's backends seen over the window. */
  pgBackends?: number;
  logBytes: { json: number; stored: number; events: number };
  /** Rows kept of each breakdown (default 40; the tables print the first 15). */
  top?: number;
}

/** Rows kept of each breakdown in the JSON, and printed. */
export const TOP_ROWS = 40;
export const PRINTED_ROWS = 15;

export function turnCounts(input: CountsInput): TurnCounts {
  const n = input.turns;
  const per = (x: number) => (n > 0 ? x / n : 0);
  const workers = input.workers.reduce(addCounts, emptyCounts());
  const split = (read: (c: ProcessCounts) => number): Split => {
    const api = per(read(input.api));
    const w = per(read(workers));
    return { api, workers: w, total: api + w };
  };
  const model = (c: ProcessCounts) => c.http[input.emulatorHost] ?? 0;
  const breakdown = (read: (c: ProcessCounts) => Record<string, number>): BreakdownRow[] => {
    const a = read(input.api);
    const w = read(workers);
    return [...new Set([...Object.keys(a), ...Object.keys(w)])]
      .map((name) => ({ name, api: per(a[name] ?? 0), workers: per(w[name] ?? 0), total: per((a[name] ?? 0) + (w[name] ?? 0)) }))
      .sort((x, y) => y.total - x.total || x.name.localeCompare(y.name))
      .slice(0, input.top ?? TOP_ROWS);
  };
  return {
    turns: n,
    redisCommands: split((c) => sum(c.redis)),
    pgStatements: split((c) => sum(c.pgStatements)),
    pgTransactions: split((c) => c.pgTransactions),
    httpBetweenProcesses: split((c) => sum(c.http) - model(c)),
    modelCalls: split(model),
    clientRequests: per(input.clientRequests),
    cpuMs: {
      api: per(input.cpuMs.api),
      workers: per(input.cpuMs.workers),
      total: per(input.cpuMs.api + input.cpuMs.workers),
      emulator: per(input.cpuMs.emulator),
    },
    pgCpuMs: { all: per(input.pgCpuMs?.all ?? 0), benchDb: per(input.pgCpuMs?.benchDb ?? 0) },
    pgBackends: input.pgBackends ?? 0,
    logBytes: { json: per(input.logBytes.json), stored: per(input.logBytes.stored) },
    logEvents: per(input.logBytes.events),
    breakdown: { redis: breakdown((c) => c.redis), pgStatements: breakdown((c) => c.pgStatements) },
  };
}

const d1 = (x: number) => x.toFixed(1);

/** Issue 33's targets for a narrator-only turn, and the factor an Emberback turn (every plugin) may cost more. */
export const TURN_TARGETS = { redisCommands: 30, pgTransactions: 6, pgStatements: 12, cpuMs: 12, emberbackFactor: 3 } as const;

export interface TargetCheck {
  target: string;
  ok: boolean;
}

/** PASS/FAIL per target: the narrator turn's four limits, then each Emberback figure against 3× the narrator's. */
export function checkTargets(narrator: TurnCounts, emberback: TurnCounts | null, targets = TURN_TARGETS): TargetCheck[] {
  const figures = [
    ['Redis commands', (t: TurnCounts) => t.redisCommands.total, targets.redisCommands],
    ['PostgreSQL transactions', (t: TurnCounts) => t.pgTransactions.total, targets.pgTransactions],
    ['PostgreSQL statements', (t: TurnCounts) => t.pgStatements.total, targets.pgStatements],
    ['CPU ms (API + workers)', (t: TurnCounts) => t.cpuMs.total, targets.cpuMs],
  ] as const;
  const checks: TargetCheck[] = figures.map(([name, read, limit]) => ({
    target: `narrator turn: ${name} ${d1(read(narrator))} <= ${limit}`,
    ok: read(narrator) <= limit,
  }));
  if (emberback)
    for (const [name, read] of figures) {
      const limit = targets.emberbackFactor * read(narrator);
      checks.push({
        target: `Emberback turn: ${name} ${d1(read(emberback))} <= ${targets.emberbackFactor}x narrator (${d1(limit)})`,
        ok: read(emberback) <= limit,
      });
    }
  return checks;
}

const pair = (s: Split) => `${d1(s.api)} / ${d1(s.workers)}`;

/** One row per phase (or run): the figures per turn. */
export function formatCountsTable(rows: readonly { name: string; counts: TurnCounts }[]): string {
  return formatTable([
    [
      'per turn',
      'turns',
      'redis cmds',
      'api / workers',
      'pg stmts',
      'pg xacts',
      'api / workers',
      'http',
      'model calls',
      'client reqs',
      'cpu ms',
      'api / workers',
      'pg cpu ms',
      'bench db',
      'backends',
      'events',
      'log bytes',
    ],
    ...rows.map(({ name, counts: c }) => [
      name,
      String(c.turns),
      d1(c.redisCommands.total),
      pair(c.redisCommands),
      d1(c.pgStatements.total),
      d1(c.pgTransactions.total),
      pair(c.pgTransactions),
      d1(c.httpBetweenProcesses.total),
      d1(c.modelCalls.total),
      d1(c.clientRequests),
      d1(c.cpuMs.total),
      pair(c.cpuMs),
      // a result written before the figure existed has none
      c.pgCpuMs ? d1(c.pgCpuMs.all) : '-',
      c.pgCpuMs ? d1(c.pgCpuMs.benchDb) : '-',
      c.pgBackends === undefined ? '-' : String(c.pgBackends),
      d1(c.logEvents),
      Math.round(c.logBytes.json).toLocaleString('en-US'),
    ]),
  ]);
}

/** A breakdown as a table: per turn, API / workers / both. */
export function formatBreakdown(title: string, rows: readonly BreakdownRow[], printed = PRINTED_ROWS): string {
  return formatTable([
    [title, 'per turn', 'api', 'workers'],
    ...rows.slice(0, printed).map((r) => [r.name, r.total.toFixed(2), r.api.toFixed(2), r.workers.toFixed(2)]),
  ]);
}
