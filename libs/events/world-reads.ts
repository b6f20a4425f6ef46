import { type Kysely, type Selectable, sql } from 'kysely';
import type { EventStore } from './event-store';
import type { WorldProvenance } from './event-types';
import type { Database, WorldsTable } from './schema';

/** A tenant's world as the `worlds` view has it. */
export interface WorldRow {
  worldId: string;
  tenantId: string;
  name: string;
  revision: number;
  archived: boolean;
  /** The current revision's document, as recorded (a JSON object). */
  document: Record<string, unknown>;
  provenance: WorldProvenance;
  /** Where the list orders it (the global position of `world.created@1`). */
  createdPosition: string;
  createdAt: string;
  updatedAt: string;
}

/** A world as a page of the list has it: no document, its description and counts. */
export interface WorldListRow extends Omit<WorldRow, 'document'> {
  description: string;
  characters: number;
  lorebookEntries: number;
  openings: number;
}

/** One revision of a world, read from its stream. */
export interface WorldRevision {
  worldId: string;
  tenantId: string;
  revision: number;
  document: Record<string, unknown>;
  recordedAt: string;
}

/** Reads of a tenant's worlds: every read names its tenant; another tenant's world is not there (null). */
export class WorldReads {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly store: EventStore,
  ) {}

  /** The tenant's world as it now is, or null (none, or another tenant's). */
  async current(tenantId: string, worldId: string): Promise<WorldRow | null> {
    const row = await this.db.selectFrom('worlds').selectAll().where('tenant_id', '=', tenantId).where('world_id', '=', worldId).executeTakeFirst();
    return row ? rowView(row) : null;
  }

  /**
   * The tenant's worlds in creation order after `afterPosition` (a cursor: the last row's
   * `createdPosition`), at most `limit`; archived ones only when asked. Each row without its
   * document: its description and counts are read in the statement (a page never loads documents).
   */
  async list(tenantId: string, options: { afterPosition?: string; limit: number; archived?: boolean }): Promise<WorldListRow[]> {
    const count = (key: string) =>
      sql<number>`coalesce(jsonb_array_length(case when jsonb_typeof(document -> ${key}) = 'array' then document -> ${key} end), 0)`;
    let query = this.db
      .selectFrom('worlds')
      .select(['world_id', 'tenant_id', 'name', 'revision', 'archived', 'provenance', 'created_position', 'created_at', 'updated_at'])
      .select([
        sql<string>`coalesce(document ->> 'description', '')`.as('description'),
        count('characters').as('characters'),
        count('lorebook').as('lorebook_entries'),
        count('openings').as('openings'),
      ])
      .where('tenant_id', '=', tenantId);
    if (options.afterPosition !== undefined) query = query.where('created_position', '>', options.afterPosition);
    if (!options.archived) query = query.where('archived', '=', false);
    const rows = await query.orderBy('created_position').limit(options.limit).execute();
    return rows.map((row) => ({
      ...rowView({ ...row, document: {} }),
      description: row.description,
      characters: Number(row.characters),
      lorebookEntries: Number(row.lorebook_entries),
      openings: Number(row.openings),
    }));
  }

  /**
   * Revision `revision` of the tenant's world, from the log (revision n is the stream's event n, a
   * `world.created@1` or `world.revised@1`), or null. Revisions never change: callers may cache.
   */
  async revision(tenantId: string, worldId: string, revision: number): Promise<WorldRevision | null> {
    const [event] = await this.store.readStream(worldId, revision - 1, 1);
    if (!event || event.tenantId !== tenantId) return null;
    if ((event.type !== 'world.created@1' && event.type !== 'world.revised@1') || event.data.revision !== revision) return null;
    return { worldId, tenantId, revision, document: event.data.document, recordedAt: event.recordedAt };
  }
}

function rowView(row: Selectable<WorldsTable>): WorldRow {
  return {
    worldId: row.world_id,
    tenantId: row.tenant_id,
    name: row.name,
    revision: row.revision,
    archived: row.archived,
    document: row.document as Record<string, unknown>,
    provenance: row.provenance as WorldProvenance,
    createdPosition: String(row.created_position),
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}
