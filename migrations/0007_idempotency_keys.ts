import { type Kysely, sql } from 'kysely';

/**
 * Idempotency keys: an append made under a key records it in its first event's metadata
 * (`idempotencyKey`, with `idempotencyRequestHash`), so the key and the append it guards are one
 * row, written in one transaction. This index makes a key unique per tenant; it is kept as long as
 * the event (the log is never pruned), i.e. well beyond the 24 hours clients may retry within.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create unique index events_idempotency_key_unique
    on events (tenant_id, (metadata->>'idempotencyKey'))
    where (metadata->>'idempotencyKey') is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index events_idempotency_key_unique`.execute(db);
}
