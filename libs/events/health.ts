import { type Kysely, sql } from 'kysely';
import type { Database } from './schema';

export interface DatabaseProbe {
  ok: boolean;
  /** Time the probe took, answered or failed. */
  latencyMs: number;
}

/** Default bound of a health probe: under the API's 2 s answer bound. */
export const DATABASE_PROBE_TIMEOUT_MS = 1_500;

/** Runs `select 1`; not ok when it fails or does not answer within `timeoutMs`. Never throws. */
export async function probeDatabase(db: Kysely<Database>, options: { timeoutMs?: number } = {}): Promise<DatabaseProbe> {
  const started = performance.now();
  const answered = sql`select 1`.execute(db).then(
    () => true,
    () => false,
  );
  const ok = await withinMs(answered, options.timeoutMs ?? DATABASE_PROBE_TIMEOUT_MS, false);
  return { ok, latencyMs: Math.round(performance.now() - started) };
}

/** The promise's value if it settles within `ms`, otherwise `fallback` (the promise is left to finish). */
export async function withinMs<T, F>(promise: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<F>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)));
  try {
    return await Promise.race([promise, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
