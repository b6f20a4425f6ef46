import { type Kysely, sql } from 'kysely';
import type { Database } from './schema';

export interface DatabaseProbe {
  ok: boolean;
  /** Time the probe took, answered or failed. */
  latencyMs: number;
}

export interface ProjectionPosition {
  name: string;
  /** Global position of the last event the projection applied. */
  position: number;
  /** Events in the log after that position. */
  lag: number;
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

/**
 * Each named projection's checkpoint against the head of the log (one read of each); a projection
 * with no checkpoint row yet is at position 0.
 */
export async function projectionPositions(db: Kysely<Database>, names: readonly string[]): Promise<ProjectionPosition[]> {
  const [checkpoints, head] = await Promise.all([
    db.selectFrom('projection_checkpoints').select(['name', 'position']).execute(),
    sql<{ head: string | null }>`select max(global_position) as head from events`.execute(db),
  ]);
  const headPosition = Number(head.rows[0]?.head ?? 0);
  const positions = new Map(checkpoints.map((c) => [c.name, Number(c.position)]));
  return names.map((name) => {
    const position = positions.get(name) ?? 0;
    return { name, position, lag: Math.max(0, headPosition - position) };
  });
}
