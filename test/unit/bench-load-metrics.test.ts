import { parseStat } from '../../bench/load/cpu';
import {
  checkExactlyOnce,
  checkSession,
  efficiencyPercent,
  idealThroughput,
  misplaced,
  overheads,
  percentile,
  type SessionLog,
  spread,
  throughput,
} from '../../bench/load/metrics';
import { COUNTS_SCENARIO, NOISY_SCENARIO, parseBenchArgs, UsageError } from '../../bench/load/options';
import { warmupPlan, warmupTurnsOf } from '../../bench/load/warmup';
import { formatTable } from '../../bench/load/report';

/** The figures `npm run bench:load` prints, on given data (the bench itself is never run by the tests). */
describe('bench:load metrics', () => {
  it('percentiles interpolate between the closest ranks', () => {
    const values = [50, 10, 40, 20, 30]; // unsorted on purpose
    expect(percentile(values, 0)).toBe(10);
    expect(percentile(values, 50)).toBe(30);
    expect(percentile(values, 100)).toBe(50);
    expect(percentile(values, 95)).toBeCloseTo(48);
    expect(percentile([1, 2, 3, 4], 50)).toBe(2.5);
    expect(percentile([7], 95)).toBe(7);
    expect(percentile([], 50)).toBeNull();
    expect(() => percentile([1], 101)).toThrow(RangeError);
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(spread(hundred)).toEqual({ p50: 50.5, p95: expect.closeTo(95.05, 6), max: 100 });
    expect(values).toEqual([50, 10, 40, 20, 30]); // not sorted in place
  });

  it('throughput, ideal and efficiency; no ideal for a 0 ms model', () => {
    expect(throughput(320, 8_000)).toBe(40);
    expect(idealThroughput({ workers: 2, concurrency: 32, modelLatencyMs: 1000 })).toBe(64);
    expect(idealThroughput({ workers: 1, concurrency: 4, modelLatencyMs: 200 })).toBe(20);
    expect(idealThroughput({ workers: 2, concurrency: 32, modelLatencyMs: 0 })).toBeNull();
    expect(efficiencyPercent(48, 64)).toBe(75);
    expect(efficiencyPercent(48, null)).toBeNull();
    expect(overheads([1_030, 1_100, 990], 1_000)).toEqual([30, 100, -10]);
  });

  const session = (over: Partial<SessionLog> = {}): SessionLog => ({
    sessionId: 's1',
    submitted: [
      { executionId: 'e1', turnId: 't1' },
      { executionId: 'e2', turnId: 't2' },
      { executionId: 'e3', turnId: 't3' },
    ],
    commits: [
      { executionId: 'e1', turnId: 't1', messageCount: 2 },
      { executionId: 'e2', turnId: 't2', messageCount: 2 },
      { executionId: 'e3', turnId: 't3', messageCount: 2 },
    ],
    failures: [],
    messages: ['t1', 't1', 't2', 't2', 't3', 't3'].map((turnId, i) => ({ turnId, messageId: `m${i}` })),
    ...over,
  });

  it('a clean session: all committed once, in order', () => {
    expect(checkSession(session())).toEqual({ committed: 3, failed: 0, missing: 0, duplicated: 0, outOfOrder: 0 });
  });

  it('a second turn.committed of an execution, and extra rows of a turn, are duplicates', () => {
    const s = session();
    s.commits.splice(2, 0, { executionId: 'e2', turnId: 't2', messageCount: 2 });
    s.messages.push({ turnId: 't3', messageId: 'm-extra' }, { turnId: 't3', messageId: 'm4' });
    // one extra commit; t3 has 4 rows for a commit of 2; m4 appears twice
    expect(checkSession(s)).toMatchObject({ committed: 3, duplicated: 1 + 2 + 1, outOfOrder: 0 });
  });

  it('commits or rows in another order than submitted are out of order', () => {
    const swapped = session();
    [swapped.commits[0], swapped.commits[1]] = [swapped.commits[1], swapped.commits[0]];
    expect(checkSession(swapped)).toMatchObject({ committed: 3, outOfOrder: 2, duplicated: 0 });
    const rows = session({ messages: ['t1', 't1', 't3', 't3', 't2', 't2'].map((turnId, i) => ({ turnId, messageId: `m${i}` })) });
    expect(checkSession(rows)).toMatchObject({ outOfOrder: 2 });
    // a committed turn missing from turn_messages leaves a gap: the rest are out of place
    const gap = session({ messages: ['t1', 't1', 't3', 't3'].map((turnId, i) => ({ turnId, messageId: `m${i}` })) });
    expect(checkSession(gap)).toMatchObject({ outOfOrder: 2 });
    expect(misplaced(['a', 'b', 'c'], ['a', 'b', 'c'])).toBe(0);
    expect(misplaced(['a', 'c'], ['a', 'b', 'c'])).toBe(2);
  });

  it('failed and lost executions are counted apart; sessions add up', () => {
    const failedOne = session({
      commits: [
        { executionId: 'e1', turnId: 't1', messageCount: 2 },
        { executionId: 'e3', turnId: 't3', messageCount: 2 },
      ],
      failures: ['e2'],
      messages: ['t1', 't1', 't3', 't3'].map((turnId, i) => ({ turnId, messageId: `m${i}` })),
    });
    expect(checkSession(failedOne)).toEqual({ committed: 2, failed: 1, missing: 0, duplicated: 0, outOfOrder: 0 });
    const lostOne = session({ commits: session().commits.slice(0, 2), messages: session().messages.slice(0, 4) });
    expect(checkSession(lostOne)).toEqual({ committed: 2, failed: 0, missing: 1, duplicated: 0, outOfOrder: 0 });
    expect(checkExactlyOnce([session(), failedOne, lostOne])).toEqual({ committed: 7, failed: 1, missing: 1, duplicated: 0, outOfOrder: 0 });
  });

  it('reads utime + stime from /proc/<pid>/stat, whatever the command name holds', () => {
    const fields = (command: string) => `4242 (${command}) S 1 4242 4242 0 -1 4194560 500 0 0 0 123 45 0 0 20 0 1 0 100 0 0`;
    expect(parseStat(fields('postgres'))).toEqual({ command: 'postgres', cpuMs: (123 + 45) * 10 });
    expect(parseStat(fields('a (b) c'))).toEqual({ command: 'a (b) c', cpuMs: 1680 });
    expect(parseStat('garbage')).toBeNull();
  });

  it('the command line: the acceptance suite, one run, the quick suite, and bad flags', () => {
    const suite = parseBenchArgs([]);
    expect(
      suite !== 'help' && suite.suite !== 'scenario' && suite.runs.map((r) => [r.name, r.sessions, r.inputs, r.latencyMs, r.workers, r.concurrency]),
    ).toEqual([
      ['a', 64, 5, 1000, 2, 32],
      ['b', 64, 5, 1000, 1, 16],
      ['c', 64, 5, 1000, 2, 16],
      ['d', 64, 5, 0, 2, 32],
      ['e', 200, 10, 1000, 2, 32],
    ]);
    expect(parseBenchArgs(['--sessions', '8', '--latency-ms', '0'])).toMatchObject({
      suite: 'custom',
      runs: [{ sessions: 8, inputs: 5, latencyMs: 0, workers: 2, concurrency: 32 }],
    });
    expect(parseBenchArgs(['--suite', 'quick'])).toMatchObject({
      suite: 'quick',
      runs: [{ sessions: 4, inputs: 2, workers: 1, concurrency: 4, latencyMs: 200 }],
    });
    expect(parseBenchArgs(['--only', 'b,c'])).toMatchObject({ runs: [{ name: 'b' }, { name: 'c' }] });
    expect(() => parseBenchArgs(['--sessions', '0'])).toThrow(/--sessions:/);
    expect(() => parseBenchArgs(['--only', 'z'])).toThrow(/--only:/);
    expect(() => parseBenchArgs(['--nope'])).toThrow(UsageError);
  });

  it('--scenario noisy: issue 32 settings, the stack and the flood adjustable, anything else a usage error naming the flag', () => {
    expect(parseBenchArgs(['--scenario', 'noisy'])).toEqual({
      suite: 'scenario',
      verdict: true,
      scenario: {
        name: 'noisy',
        latencyMs: 200,
        workers: 2,
        concurrency: 8,
        players: { sessions: 8, inputs: 10 },
        flood: { sessions: 200, inputs: 10 },
        maxP95Ratio: 1.5,
      },
    });
    expect(parseBenchArgs(['--scenario', 'noisy', '--sessions', '20', '--inputs', '3', '--workers', '1', '--latency-ms', '0', '--no-verdict'])).toEqual({
      suite: 'scenario',
      verdict: false,
      scenario: { ...NOISY_SCENARIO, workers: 1, latencyMs: 0, flood: { sessions: 20, inputs: 3 } },
    });
    expect(parseBenchArgs(['--scenario', 'noisy', '--db-pool-size', '12'])).toMatchObject({ scenario: { dbPoolSize: 12 } });
    expect(() => parseBenchArgs(['--scenario', 'loud'])).toThrow(/--scenario: one of noisy, counts\n/);
    expect(() => parseBenchArgs(['--scenario'])).toThrow(UsageError);
    expect(() => parseBenchArgs(['--scenario', 'noisy', '--only', 'a'])).toThrow(/--suite and --only do not go with --scenario/);
    expect(() => parseBenchArgs(['--scenario', 'noisy', '--suite', 'quick'])).toThrow(UsageError);
    expect(() => parseBenchArgs(['--scenario', 'noisy', '--sessions', '0'])).toThrow(/--sessions:/);
    expect(() => parseBenchArgs(['--no-verdict'])).toThrow(/--no-verdict goes with --scenario/);
    // the usage text says how to run it
    expect(() => parseBenchArgs(['--scenario', 'loud'])).toThrow(/--scenario noisy {8}issue 32's noisy neighbour/);
  });

  it('--scenario counts: issue 33 settings, each phase and the stack adjustable', () => {
    expect(parseBenchArgs(['--scenario', 'counts'])).toEqual({ suite: 'scenario', verdict: true, scenario: COUNTS_SCENARIO });
    expect(COUNTS_SCENARIO).toMatchObject({ latencyMs: 0, sessions: 4, inputs: 10 });
    expect(parseBenchArgs(['--scenario', 'counts', '--sessions', '2', '--inputs', '3', '--workers', '1', '--latency-ms', '50', '--no-verdict'])).toEqual({
      suite: 'scenario',
      verdict: false,
      scenario: { ...COUNTS_SCENARIO, sessions: 2, inputs: 3, workers: 1, latencyMs: 50 },
    });
    expect(() => parseBenchArgs(['--scenario', 'counts', '--only', 'a'])).toThrow(/--suite and --only do not go with --scenario/);
    expect(() => parseBenchArgs(['--scenario', 'loud'])).toThrow(/--scenario counts {7}issue 33's round trips per turn/);
  });

  it('--warmup: warm-up turns (of each kind before the counts phases, before a run window; default 2 per worker), not with --scenario noisy', () => {
    expect(warmupTurnsOf(COUNTS_SCENARIO)).toBe(2 * COUNTS_SCENARIO.workers);
    // exactly N turns: at most the run's sessions, the first few one turn more
    expect(warmupPlan({ workers: 2, sessions: 4 })).toEqual({ players: 4, each: 1, longer: 0 });
    expect(warmupPlan({ workers: 2, sessions: 4, warmupTurns: 10 })).toEqual({ players: 4, each: 2, longer: 2 });
    expect(warmupPlan({ workers: 2, sessions: 64, warmupTurns: 10 })).toEqual({ players: 10, each: 1, longer: 0 });
    expect(warmupPlan({ workers: 2, sessions: 64, warmupTurns: 640 })).toEqual({ players: 64, each: 10, longer: 0 });
    const warm = parseBenchArgs(['--scenario', 'counts', '--warmup', '400']);
    expect(warm).toEqual({ suite: 'scenario', verdict: true, scenario: { ...COUNTS_SCENARIO, warmupTurns: 400 } });
    expect(warm !== 'help' && warm.suite === 'scenario' && warm.scenario.name === 'counts' && warmupTurnsOf(warm.scenario)).toBe(400);
    expect(() => parseBenchArgs(['--scenario', 'counts', '--warmup', '0'])).toThrow(/--warmup:/);
    expect(() => parseBenchArgs(['--scenario', 'noisy', '--warmup', '10'])).toThrow(/--warmup does not go with --scenario noisy/);
    expect(parseBenchArgs(['--only', 'a', '--warmup', '640'])).toMatchObject({ suite: 'acceptance', runs: [{ name: 'a', warmupTurns: 640 }] });
    expect(parseBenchArgs(['--sessions', '8', '--warmup', '16'])).toMatchObject({ suite: 'custom', runs: [{ sessions: 8, warmupTurns: 16 }] });
    expect(parseBenchArgs(['--only', 'a'])).toMatchObject({ runs: [{ name: 'a' }] });
    const plain = parseBenchArgs(['--only', 'a']);
    expect(plain !== 'help' && plain.suite !== 'scenario' && plain.runs[0]!.warmupTurns).toBeUndefined();
  });

  it('formats aligned columns', () => {
    expect(
      formatTable([
        ['run', 'turns/s'],
        ['a', '19.3'],
        ['quick', '4.0'],
      ]),
    ).toBe(['run    turns/s', '-----  -------', 'a         19.3', 'quick      4.0'].join('\n'));
  });
});
