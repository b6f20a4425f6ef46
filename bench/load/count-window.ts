import { diffCounts, type TurnCounts, turnCounts } from './counts';
import { watchBackends } from './backend-cpu';
import { cpuSnapshot, cpuUse } from './cpu';
import type { TurnRecord } from './players';
import { logBytesSince, logPosition, scrapeAll } from './scrape';
import type { BenchStack } from './stack';

/** A window of a run whose round trips are counted: opened before the turns, closed after them. */
export interface CountWindow {
  /** The counts per committed turn of `turns` (the players' records of the window); `totals`: not divided (a window without turns). */
  close(turns: readonly TurnRecord[], options?: { totals?: boolean }): Promise<TurnCounts>;
}

/**
 * Reads every engine process's counters, the log's position and the processes' CPU (PostgreSQL's
 * too: all its processes, and the backends of the run's database) now; `close`
 * reads them again and divides the differences by the window's committed turns. What the
 * processes did in the background meanwhile (BullMQ's blocking pops and stalled checks, the
 * projector's polls) is in the figures, and so are the two scrapes' own reads of the queue depth
 * and the projections (a few commands per process, over all the window's turns).
 */
export async function openCountWindow(stack: BenchStack): Promise<CountWindow> {
  const groups = { api: [stack.api.pid], workers: stack.workers.map((w) => w.pid), emulator: [stack.emulator.pid] };
  const position = await logPosition(stack.databaseUrl);
  const before = await scrapeAll(stack.metricsUrls);
  const backends = await watchBackends(stack.databaseUrl, stack.databaseName);
  const cpuBefore = cpuSnapshot(groups);
  return {
    async close(turns, options = {}) {
      const cpu = cpuUse(cpuBefore, cpuSnapshot(groups));
      const benchDb = await backends.stop();
      const after = await scrapeAll(stack.metricsUrls);
      const log = await logBytesSince(stack.databaseUrl, position);
      const committed = turns.filter((t) => t.outcome === 'committed');
      return turnCounts({
        turns: options.totals ? 1 : committed.length,
        api: diffCounts(before.api, after.api),
        workers: after.workers.map((w, i) => diffCounts(before.workers[i], w)),
        emulatorHost: stack.emulatorHost,
        clientRequests: turns.reduce((n, t) => n + 1 + t.polls, 0),
        cpuMs: { api: cpu.api, workers: cpu.workers, emulator: cpu.emulator },
        pgCpuMs: { all: cpu.postgres, benchDb: benchDb.cpuMs },
        pgBackends: benchDb.backends,
        logBytes: log,
      });
    },
  };
}
