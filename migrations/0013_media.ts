import { type Kysely, sql } from 'kysely';

/**
 * Media a plugin generated (`ctx.assets.generate`, spec §1 "Images that have been shown") for
 * deployments on PostgreSQL: the bytes in `media` (bytea), keyed by tenant, session and media id
 * (the embedded default keeps them as files under its data directory, behind the same port).
 * The log records only the reference (`asset.generated@1`: id, type, length, sha256, meta).
 *
 * `turn_messages.media` is the reference of the message the player sees (a row with no text, so no
 * model's history shows it; its description row beside it does).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table media (
      tenant_id text not null,
      session_id text not null,
      media_id text not null,
      mime_type text not null,
      meta text not null,
      bytes bytea not null,
      created_at timestamptz not null default now(),
      primary key (tenant_id, session_id, media_id)
    )`.execute(db);
  await sql`alter table turn_messages add column media jsonb`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table turn_messages drop column media`.execute(db);
  await sql`drop table media`.execute(db);
}
