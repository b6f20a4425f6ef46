import { type Kysely, sql, type Transaction } from 'kysely';
import { EventStore } from '../event-store';
import type { Database } from '../schema';
import { executionsProjection } from './executions';
import { summariesProjection } from './summaries';
import type { Projection } from './projection';
import { traceEventsProjection } from './trace-events';
import { turnMessagesProjection } from './turn-messages';

export const defaultProjections: readonly Projection[] = [executionsProjection, turnMessagesProjection, traceEventsProjection, summariesProjection];

const BATCH = 500;

/**
 * Applies events to projections after each one's checkpoint. The checkpoint row is locked for the
 * batch and moved in the same transaction as the rows it covers, so concurrent runners in many
 * processes never apply an event twice and a crash loses nothing.
 */
export class ProjectionRunner {
  private readonly store: EventStore;
  constructor(
    private readonly db: Kysely<Database>,
    private readonly projections: readonly Projection[] = defaultProjections,
  ) {
    this.store = new EventStore(db);
  }

  /** Brings every projection up to the end of the log; returns the number of events applied. */
  async catchUp(): Promise<number> {
    await this.ensureCheckpoints();
    let applied = 0;
    for (const projection of this.projections) {
      for (;;) {
        const n = await this.db.transaction().execute((trx) => this.applyBatch(trx, projection));
        applied += n;
        if (n < BATCH) break;
      }
    }
    return applied;
  }

  /** Drops every projection's rows and rebuilds them from the log in one transaction. */
  async replay(onProgress?: (projection: string, position: number) => void): Promise<number> {
    await this.ensureCheckpoints();
    return this.db.transaction().execute(async (trx) => {
      let applied = 0;
      for (const projection of this.projections) {
        await lockCheckpoint(trx, projection.name);
        for (const table of projection.tables) await trx.deleteFrom(table).execute();
        await trx.updateTable('projection_checkpoints').set({ position: '0' }).where('name', '=', projection.name).execute();
        for (;;) {
          const n = await this.applyBatch(trx, projection);
          applied += n;
          if (n < BATCH) break;
          onProgress?.(projection.name, await checkpoint(trx, projection.name));
        }
      }
      return applied;
    });
  }

  private async applyBatch(trx: Transaction<Database>, projection: Projection): Promise<number> {
    const from = await lockCheckpoint(trx, projection.name);
    const events = await this.store.readAll(from, BATCH, trx);
    for (const event of events) await projection.apply(trx, event);
    if (events.length > 0) {
      await trx
        .updateTable('projection_checkpoints')
        .set({ position: String(events[events.length - 1].globalPosition) })
        .where('name', '=', projection.name)
        .execute();
    }
    return events.length;
  }

  private async ensureCheckpoints() {
    await this.db
      .insertInto('projection_checkpoints')
      .values(this.projections.map((p) => ({ name: p.name, position: '0' })))
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
  }
}

async function lockCheckpoint(trx: Transaction<Database>, name: string): Promise<number> {
  const row = await sql<{ position: string }>`select position from projection_checkpoints where name = ${name} for update`.execute(trx);
  return Number(row.rows[0]?.position ?? 0);
}

async function checkpoint(trx: Transaction<Database>, name: string): Promise<number> {
  const row = await trx.selectFrom('projection_checkpoints').select('position').where('name', '=', name).executeTakeFirst();
  return Number(row?.position ?? 0);
}
