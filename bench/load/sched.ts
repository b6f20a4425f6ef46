import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { percentile } from './metrics';

/**
 * How much a run's processes waited for a core (Linux): a turn's overhead on a shared machine is
 * often time its processes were ready to run and did not get the CPU, which no timestamp of the log
 * tells apart from a wait on I/O. Read from /proc: each process's main thread (the event loop) on
 * CPU and waiting on the run queue (`/proc/<pid>/schedstat`), the machine's runnable tasks
 * (`/proc/loadavg`, sampled), and the share of the window in which some task waited for a CPU
 * (`/proc/pressure/cpu`, PSI). Absent figures (not Linux, no PSI) are null.
 */
export interface Contention {
  /** Per group, % of the window its main threads (average over the group's processes) waited for a core; and ran. */
  waitingPercent: Record<string, number | null>;
  onCpuPercent: Record<string, number | null>;
  /** Runnable tasks on the machine, sampled each second over the window, against `cores`. */
  runnable: { p50: number | null; p90: number | null };
  /** % of the window in which at least one task waited for a CPU (PSI `some`). */
  pressurePercent: number | null;
}

/** Main-thread run and run-queue wait, ms, of one process; null when unreadable. */
function schedstat(pid: number): { run: number; wait: number } | null {
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(' ').map(Number);
    return Number.isFinite(run) && Number.isFinite(wait) ? { run: run / 1e6, wait: wait / 1e6 } : null;
  } catch {
    return null;
  }
}

/** PSI's `some` total, µs; null without PSI. */
function pressureTotalUs(): number | null {
  try {
    const some = readFileSync('/proc/pressure/cpu', 'utf8').match(/^some .*total=(\d+)/m);
    return some ? Number(some[1]) : null;
  } catch {
    return null;
  }
}

function runnableNow(): number | null {
  try {
    const running = Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[3]?.split('/')[0]);
    // the reader itself is one of them
    return Number.isFinite(running) ? Math.max(0, running - 1) : null;
  } catch {
    return null;
  }
}

/** Starts watching `groups` (pids by group name); `stop` at the window's end answers the figures. */
export function watchContention(groups: Record<string, readonly number[]>, sampleMs = 1_000): { stop: () => Contention } {
  const started = performance.now();
  const before = new Map(Object.values(groups).flatMap((pids) => pids.map((pid) => [pid, schedstat(pid)] as const)));
  const pressureBefore = pressureTotalUs();
  const samples: number[] = [];
  const timer = setInterval(() => {
    const n = runnableNow();
    if (n !== null) samples.push(n);
  }, sampleMs);
  timer.unref();
  return {
    stop: () => {
      clearInterval(timer);
      const windowMs = performance.now() - started;
      const waitingPercent: Record<string, number | null> = {};
      const onCpuPercent: Record<string, number | null> = {};
      for (const [group, pids] of Object.entries(groups)) {
        const spans = pids.flatMap((pid) => {
          const a = before.get(pid);
          const b = schedstat(pid);
          return a && b ? [{ run: b.run - a.run, wait: b.wait - a.wait }] : [];
        });
        const mean = (f: (s: { run: number; wait: number }) => number) =>
          spans.length && windowMs > 0 ? (spans.reduce((sum, s) => sum + f(s), 0) / spans.length / windowMs) * 100 : null;
        waitingPercent[group] = mean((s) => s.wait);
        onCpuPercent[group] = mean((s) => s.run);
      }
      const pressureAfter = pressureTotalUs();
      return {
        waitingPercent,
        onCpuPercent,
        runnable: { p50: percentile(samples, 50), p90: percentile(samples, 90) },
        pressurePercent: pressureBefore !== null && pressureAfter !== null && windowMs > 0 ? ((pressureAfter - pressureBefore) / 1000 / windowMs) * 100 : null,
      };
    },
  };
}

/** One line: each group's main threads' wait for a core and time on it (% of the window), the runnable tasks, the pressure. */
export function formatContention(c: Contention, cores: number): string {
  const pct = (n: number | null) => (n === null ? '—' : n.toFixed(0));
  const groups = Object.keys(c.waitingPercent).map((g) => `${g} ${pct(c.waitingPercent[g])}/${pct(c.onCpuPercent[g])}`);
  return (
    `% of the window main threads waited for a core / ran: ${groups.join(', ')}; runnable tasks p50/p90 ` +
    `${pct(c.runnable.p50)}/${pct(c.runnable.p90)} on ${cores} cores; CPU pressure (some task waiting) ${pct(c.pressurePercent)} %`
  );
}

/** CPU ms per committed turn of a run's own processes, and the turns/s the machine's cores allow at that rate. */
export interface CpuCeiling {
  msPerTurn: number;
  turnsPerSecond: number | null;
}

/** The ceiling from the CPU ms the run's own processes used over the window. */
export function cpuCeiling(ms: number, turns: number, cores = cpus().length): CpuCeiling {
  const msPerTurn = turns > 0 ? ms / turns : 0;
  return { msPerTurn, turnsPerSecond: msPerTurn > 0 ? (cores * 1000) / msPerTurn : null };
}
