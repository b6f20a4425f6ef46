import { type Kysely, sql } from 'kysely';

/** How long a migration that locks the log waits for each table's lock (`withLockTimeout`). */
export const LOCK_TIMEOUT = '5s';

/**
 * Runs `statements` (PL/pgSQL) in one block whose lock timeout is `LOCK_TIMEOUT`, set back after it
 * (for the migrations run in the same transaction): on a busy log a lock request queued behind a
 * long transaction would otherwise hold up every append queued behind it; past the timeout the
 * block fails with lock_not_available, having changed nothing, and the migration can be run again.
 * `guard`: statements before the timeout is set (a version check that returns); `onError`: an
 * exception clause of the block (`when … then …`), which rolls its settings back with it.
 */
export async function withLockTimeout(db: Kysely<unknown>, block: { statements: string; guard?: string; onError?: string }): Promise<void> {
  await sql
    .raw(
      `do $$
    declare
      previous text := current_setting('lock_timeout');
    begin
      ${block.guard ?? ''}
      perform set_config('lock_timeout', '${LOCK_TIMEOUT}', true);
      ${block.statements}
      perform set_config('lock_timeout', previous, true);
    ${block.onError ? `exception ${block.onError}` : ''}
    end $$`,
    )
    .execute(db);
}
