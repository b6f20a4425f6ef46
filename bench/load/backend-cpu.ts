import { Client } from 'pg';
import { runtimeSnapshot } from './cpu';

/** How often the run database's backends are listed while a window is open. */
const POLL_MS = 250;

/** The CPU of one database's PostgreSQL backends over a window (`watchBackends`). */
export interface BackendWatch {
  /** CPU ms the backends used since the watch began; ends the watch. */
  stop(): Promise<{ cpuMs: number; backends: number }>;
}

/**
 * Watches the backends connected to `databaseName` (through a connection of its own, left out):
 * lists them every `POLL_MS` and reads each one's CPU (/proc schedstat), so a backend that a pool
 * opens and closes within the window is counted too (up to its last sighting). A backend there at
 * the start counts from then; one that appears later counts whole (its start-up included).
 */
export async function watchBackends(databaseUrl: string, databaseName: string): Promise<BackendWatch> {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  const poll = async (initial: boolean) => {
    const { rows } = await db.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [databaseName]);
    for (const [pid, ms] of runtimeSnapshot(rows.map((r) => r.pid))) {
      if (initial) first.set(pid, ms);
      last.set(pid, ms);
    }
  };
  await poll(true);
  let polling: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    polling = polling.then(() => poll(false)).catch(() => undefined);
  }, POLL_MS);
  return {
    async stop() {
      clearInterval(timer);
      await polling;
      await poll(false);
      await db.end();
      let cpuMs = 0;
      for (const [pid, ms] of last) cpuMs += Math.max(0, ms - (first.get(pid) ?? 0));
      return { cpuMs, backends: last.size };
    },
  };
}
