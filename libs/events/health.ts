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
  const timeoutMs = options.timeoutMs ?? DATABASE_PROBE_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const answered = sql`select 1`.execute(db).then(
    () => true,
    () => false,
  );
  try {
    const ok = await Promise.race([answered, timedOut]);
    return { ok, latencyMs: Math.round(performance.now() - started) };
  } finally {
    clearTimeout(timer);
  }
}
