import { type Kysely, type Selectable, sql } from 'kysely';
import type { Database, WorldGenerationsTable } from './schema';

/** A world generation job's state (`queued` → `drafting` → `repairing` → `done` or `failed`). */
export type WorldGenerationStatus = 'queued' | 'drafting' | 'repairing' | 'done' | 'failed';

/** A world generation job as the `world_generations` view has it. */
export interface WorldGenerationRow {
  jobId: string;
  tenantId: string;
  status: WorldGenerationStatus;
  /** The round of the last call recorded (0: the draft; n: the n-th repair round). */
  round: number;
  /** The most repair rounds the job may take. */
  rounds: number;
  worldId: string | null;
  error: { code: string; reason: string } | null;
  createdAt: string;
  updatedAt: string;
}

const STATUSES: readonly WorldGenerationStatus[] = ['queued', 'drafting', 'repairing', 'done', 'failed'];

/** Reads of world generation jobs: a job is read with its tenant (another tenant's is not there: null). */
export class WorldGenerationReads {
  constructor(private readonly db: Kysely<Database>) {}

  async job(tenantId: string, jobId: string): Promise<WorldGenerationRow | null> {
    const row = await this.db.selectFrom('world_generations').selectAll().where('tenant_id', '=', tenantId).where('job_id', '=', jobId).executeTakeFirst();
    return row ? rowView(row) : null;
  }

  /**
   * Jobs not ended yet (every tenant's), in job id order after `afterJobId`, at most `limit`; with
   * `idleForMs`, only those whose last progress is older than that (the database's clock).
   */
  async pending(options: { idleForMs?: number; afterJobId?: string; limit?: number } = {}): Promise<{ jobId: string; tenantId: string }[]> {
    let query = this.db
      .selectFrom('world_generations')
      .select(['job_id', 'tenant_id'])
      .where('status', 'not in', ['done', 'failed'])
      .orderBy('job_id')
      .limit(options.limit ?? 500);
    if (options.idleForMs !== undefined) query = query.where('updated_at', '<', sql<Date>`now() - ${options.idleForMs} * interval '1 millisecond'`);
    if (options.afterJobId !== undefined) query = query.where('job_id', '>', options.afterJobId);
    const rows = await query.execute();
    return rows.map((r) => ({ jobId: r.job_id, tenantId: r.tenant_id }));
  }
}

function rowView(row: Selectable<WorldGenerationsTable>): WorldGenerationRow {
  const status = STATUSES.find((s) => s === row.status);
  if (!status) throw new Error(`world generation ${row.job_id}: unknown status ${row.status}`);
  return {
    jobId: row.job_id,
    tenantId: row.tenant_id,
    status,
    round: row.round,
    rounds: row.rounds,
    worldId: row.world_id,
    error: row.error_code === null ? null : { code: row.error_code, reason: row.error_reason ?? '' },
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}
