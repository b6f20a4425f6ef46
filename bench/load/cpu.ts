import { readdirSync, readFileSync } from 'node:fs';

/** /proc reports CPU time in USER_HZ ticks, 100 per second on Linux. */
const MS_PER_TICK = 10;

/** CPU groups of a run: the bench's own processes by pid, the shared servers by command name. */
export interface CpuGroups {
  api: number[];
  workers: number[];
  emulator: number[];
}

export type CpuGroupName = 'api' | 'workers' | 'emulator' | 'postgres' | 'redis';

/** utime + stime of each process, in ms, when the snapshot was taken. */
export type CpuSnapshot = Record<CpuGroupName, Map<number, number>>;

/** CPU ms each group used between two snapshots. */
export type CpuUse = Record<CpuGroupName | 'total', number>;

/** utime + stime of one process in ms; null if it is gone (or this is not Linux). */
export function processCpuMs(pid: number): number | null {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.cpuMs ?? null;
  } catch {
    return null;
  }
}

/** Fields of /proc/<pid>/stat: the command is in parentheses and may hold spaces or parentheses itself. */
export function parseStat(stat: string): { command: string; cpuMs: number } | null {
  const open = stat.indexOf('(');
  const close = stat.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  // after ")": state is field 3, utime field 14, stime field 15
  const rest = stat
    .slice(close + 2)
    .trim()
    .split(/\s+/);
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return null;
  return { command: stat.slice(open + 1, close), cpuMs: (utime + stime) * MS_PER_TICK };
}

/** Every process whose command name is one of `commands`, with its CPU ms. */
function byCommand(commands: readonly string[]): Map<string, Map<number, number>> {
  const found = new Map(commands.map((c) => [c, new Map<number, number>()]));
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: ReturnType<typeof parseStat>;
    try {
      stat = parseStat(readFileSync(`/proc/${entry}/stat`, 'utf8'));
    } catch {
      continue; // exited meanwhile
    }
    if (stat) found.get(stat.command)?.set(Number(entry), stat.cpuMs);
  }
  return found;
}

export function cpuSnapshot(groups: CpuGroups): CpuSnapshot {
  const pids = (list: number[]) => {
    const found = new Map<number, number>();
    for (const pid of list) {
      const ms = processCpuMs(pid);
      if (ms !== null) found.set(pid, ms);
    }
    return found;
  };
  const servers = byCommand(['postgres', 'redis-server']);
  return {
    api: pids(groups.api),
    workers: pids(groups.workers),
    emulator: pids(groups.emulator),
    postgres: servers.get('postgres')!,
    redis: servers.get('redis-server')!,
  };
}

/**
 * CPU used per group between `before` and `after`. A process that appeared meanwhile (a new
 * PostgreSQL backend) counts whole; one that exited meanwhile is lost (its time cannot be read).
 */
export function cpuUse(before: CpuSnapshot, after: CpuSnapshot): CpuUse {
  const groups: CpuGroupName[] = ['api', 'workers', 'emulator', 'postgres', 'redis'];
  const use = { total: 0 } as CpuUse;
  for (const g of groups) {
    let ms = 0;
    for (const [pid, end] of after[g]) ms += Math.max(0, end - (before[g].get(pid) ?? 0));
    use[g] = ms;
    use.total += ms;
  }
  return use;
}

/**
 * CPU ms each process has run (/proc/<pid>/schedstat: nanoseconds, where /proc/<pid>/stat counts
 * 10 ms ticks, which a short-lived backend's few ms round to 0); a process gone is left out, and
 * one without schedstat is read from stat.
 */
export function runtimeSnapshot(pids: readonly number[]): Map<number, number> {
  const found = new Map<number, number>();
  for (const pid of pids) {
    let ms: number | null = null;
    try {
      const ns = Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
      if (Number.isFinite(ns)) ms = ns / 1e6;
    } catch {
      ms = processCpuMs(pid);
    }
    if (ms !== null) found.set(pid, ms);
  }
  return found;
}

/** The CPU ms the given PostgreSQL backends used between the snapshots (e.g. those of the bench's database). */
export function backendsCpuMs(before: CpuSnapshot, after: CpuSnapshot, pids: readonly number[]): number {
  return pids.reduce((sum, pid) => {
    const end = after.postgres.get(pid);
    return end === undefined ? sum : sum + Math.max(0, end - (before.postgres.get(pid) ?? 0));
  }, 0);
}
