import { loadConfig } from '../libs/engine';
import { migrateAsOwner, migrateToLatest, openDatabase } from '../libs/events';
import { runMain } from '../apps/process-lifecycle';

/**
 * `npm run migrate`: applies pending migrations. PostgreSQL: as the owner role
 * (COVEL_MIGRATION_DATABASE_URL, else DATABASE_URL), then, with COVEL_APP_ROLE set, grants that
 * role what the API and workers need (idempotent). Embedded: the PGlite data directory.
 */
async function main() {
  const config = loadConfig();
  if (config.database.kind === 'postgres') {
    const { applied, granted } = await migrateAsOwner(config.database);
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
    if (granted) console.log(`granted role ${granted}: SELECT, INSERT on events; SELECT on the migration tables; SELECT, INSERT, UPDATE, DELETE on the rest`);
    return;
  }
  const database = await openDatabase(config.database);
  try {
    const applied = await migrateToLatest(database.db);
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
  } finally {
    await database.close();
  }
}

runMain(main);
