import { renderCounts } from '../../bench/bench-docs';
import { addCounts, checkTargets, diffCounts, emptyCounts, formatCountsTable, parseCounts, type ProcessCounts, turnCounts } from '../../bench/load/counts';
import { type CountsJson, countsVerdicts } from '../../bench/load/counts-report';
import type { CountsPhase, CountsResult } from '../../bench/load/counts-scenario';
import { COUNTS_SCENARIO } from '../../bench/load/options';

const EXPOSITION = `# HELP covel_redis_commands_total Redis commands
# TYPE covel_redis_commands_total counter
covel_redis_commands_total{command="evalsha"} 12
covel_redis_commands_total{command="publish"} 40
covel_pg_statements_total{statement="select * from \\"events\\" where \\"stream_id\\" = $n"} 7
covel_pg_statements_total{statement="begin"} 3
covel_pg_transactions_total 9
covel_http_requests_total{host="127.0.0.1:4000"} 5
covel_turns_committed_total{kind="input"} 10
`;

const counts = (over: Partial<ProcessCounts>): ProcessCounts => ({ ...emptyCounts(), ...over });

describe('parseCounts', () => {
  it('reads the round-trip counters (escaped labels too) and ignores other families', () => {
    expect(parseCounts(EXPOSITION)).toEqual({
      redis: { evalsha: 12, publish: 40 },
      pgStatements: { 'select * from "events" where "stream_id" = $n': 7, begin: 3 },
      pgTransactions: 9,
      http: { '127.0.0.1:4000': 5 },
    });
  });
});

describe('diffCounts and addCounts', () => {
  it('keep what grew between two readings, and sum processes', () => {
    const before = counts({ redis: { evalsha: 2, publish: 40 }, pgTransactions: 4 });
    const after = counts({ redis: { evalsha: 5, publish: 40, bzpopmin: 1 }, pgTransactions: 10 });
    expect(diffCounts(before, after)).toEqual(counts({ redis: { evalsha: 3, bzpopmin: 1 }, pgTransactions: 6 }));
    expect(addCounts(counts({ redis: { a: 1 }, pgTransactions: 1 }), counts({ redis: { a: 2, b: 1 }, pgTransactions: 2 }))).toEqual(
      counts({ redis: { a: 3, b: 1 }, pgTransactions: 3 }),
    );
  });
});

describe('turnCounts', () => {
  const input = {
    turns: 10,
    api: counts({ redis: { evalsha: 20 }, pgStatements: { begin: 10, commit: 10, insert: 10 }, pgTransactions: 20, http: {} }),
    workers: [
      counts({ redis: { publish: 300, evalsha: 50 }, pgStatements: { begin: 30, commit: 30 }, pgTransactions: 40, http: { 'emu:1': 10, 'other:2': 2 } }),
      counts({ redis: { publish: 100, multi: 5 }, pgStatements: { select: 20 }, pgTransactions: 20, http: { 'emu:1': 5 } }),
    ],
    emulatorHost: 'emu:1',
    clientRequests: 25,
    cpuMs: { api: 50, workers: 150, emulator: 30 },
    pgCpuMs: { all: 400, benchDb: 170 },
    logBytes: { json: 12_000, stored: 9_000, events: 70 },
    top: 2,
  };

  it('divides every figure by the committed turns, API and workers apart, model calls apart from other HTTP', () => {
    const c = turnCounts(input);
    expect(c.redisCommands).toEqual({ api: 2, workers: 45.5, total: 47.5 });
    expect(c.pgStatements).toEqual({ api: 3, workers: 8, total: 11 });
    expect(c.pgTransactions).toEqual({ api: 2, workers: 6, total: 8 });
    expect(c.modelCalls).toEqual({ api: 0, workers: 1.5, total: 1.5 });
    expect(c.httpBetweenProcesses).toEqual({ api: 0, workers: 0.2, total: 0.2 });
    expect(c.clientRequests).toBe(2.5);
    expect(c.cpuMs).toEqual({ api: 5, workers: 15, total: 20, emulator: 3 });
    expect(c.pgCpuMs).toEqual({ all: 40, benchDb: 17 });
    expect(c.logBytes).toEqual({ json: 1200, stored: 900 });
    expect(c.logEvents).toBe(7);
  });

  it('keeps the top rows of each breakdown, most first', () => {
    const c = turnCounts(input);
    expect(c.breakdown.redis).toEqual([
      { name: 'publish', api: 0, workers: 40, total: 40 },
      { name: 'evalsha', api: 2, workers: 5, total: 7 },
    ]);
    expect(c.breakdown.pgStatements.map((r) => r.name)).toEqual(['begin', 'commit']);
  });

  it('gives 0 per turn, not NaN, when no turn committed', () => {
    expect(turnCounts({ ...input, turns: 0 }).redisCommands).toEqual({ api: 0, workers: 0, total: 0 });
  });
});

/** A phase whose turn costs `redis` commands, `xacts` transactions, `stmts` statements and `cpu` ms. */
function phase(redis: number, xacts: number, stmts: number, cpu: number, session = {}): CountsPhase {
  const turns = 10;
  return {
    session,
    turns: { expected: turns, committed: turns, failed: 0, errors: 0 },
    log: { committed: turns, failed: 0, duplicated: 0, outOfOrder: 0, missing: 0 },
    windowMs: 5000,
    loadAverage: { start: 1, end: 2 },
    counts: turnCounts({
      turns,
      api: counts({ redis: { evalsha: turns * 2 }, pgStatements: { begin: turns }, pgTransactions: turns }),
      workers: [
        counts({ redis: { publish: turns * (redis - 2) }, pgStatements: { 'insert into "events"': turns * (stmts - 1) }, pgTransactions: turns * (xacts - 1) }),
      ],
      emulatorHost: 'emu:1',
      clientRequests: turns * 2,
      cpuMs: { api: turns * 2, workers: turns * (cpu - 2), emulator: 10 },
      logBytes: { json: turns * 1000, stored: turns * 800, events: turns * 7 },
    }),
    errorSamples: [],
  };
}

describe('checkTargets', () => {
  it('checks the narrator turn against the limits and the Emberback turn against 3x the narrator', () => {
    const checks = checkTargets(phase(30, 6, 12, 12).counts, phase(91, 18, 36, 30).counts);
    expect(checks.map((c) => c.ok)).toEqual([true, true, true, true, false, true, true, true]);
    expect(checks[4].target).toBe('Emberback turn: Redis commands 91.0 <= 3x narrator (90.0)');
    expect(checks[0].target).toBe('narrator turn: Redis commands 30.0 <= 30');
  });

  it("fails today's figures", () => {
    expect(checkTargets(phase(284, 31, 69, 158).counts, null).every((c) => !c.ok)).toBe(true);
  });
});

describe('the counts report', () => {
  const result: CountsResult = {
    spec: COUNTS_SCENARIO,
    startedAt: '2026-12-06T00:00:00.000Z',
    setupMs: 1000,
    idle: { ms: 5000, counts: phase(3, 2, 2, 2).counts },
    narrator: phase(40, 8, 20, 30),
    emberback: phase(100, 20, 50, 70, { worldId: 'emberback' }),
    crashed: [],
  };

  it('prints one aligned row per phase', () => {
    const table = formatCountsTable([
      { name: 'narrator-only', counts: result.narrator.counts },
      { name: 'Emberback', counts: result.emberback.counts },
    ]).split('\n');
    expect(table).toHaveLength(4);
    expect(table[0]).toMatch(/^per turn\s+turns\s+redis cmds\s+api \/ workers\s+pg stmts\s+pg xacts/);
    expect(table[2]).toMatch(/^narrator-only\s+10\s+40\.0\s+2\.0 \/ 38\.0\s+20\.0\s+8\.0\s+1\.0 \/ 7\.0/);
    expect(new Set(table.map((l) => l.length)).size).toBe(1);
  });

  it('has the verdicts (the targets, then exactly once) and renders the docs block from them', () => {
    const verdicts = countsVerdicts(result);
    expect(verdicts.map((v) => v.ok)).toEqual([false, false, false, false, true, true, true, true, true]);
    const json: CountsJson = {
      name: 'counts',
      date: '2026-12-06T00:00:00.000Z',
      node: 'v20',
      cores: 2,
      cpu: 'AMD EPYC',
      commit: 'abc1234',
      verdicts,
      run: result,
    };
    const block = renderCounts(json);
    expect(block).toContain('| narrator-only (10 turns) | 40.0 (2.0 / 38.0) | 20.0 | 8.0 (1.0 / 7.0) |');
    expect(block).toContain('| `publish` | 38.00 | 98.00 |');
    expect(block).toContain('- **FAIL**: narrator turn: Redis commands 40.0 <= 30');
    expect(block).toContain('- PASS: every turn of both phases committed exactly once, in order');
    expect(block).toContain('- Idle for 5 s before the phases');
  });
});
