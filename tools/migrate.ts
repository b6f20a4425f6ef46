import { loadConfig } from '../libs/engine';
import { migrateToLatest, openDatabase } from '../libs/events';
import { runMain } from '../apps/process-lifecycle';

/** `npm run migrate`: applies pending migrations to DATABASE_URL (or the embedded PGlite). */
async function main() {
  const config = loadConfig();
  const database = await openDatabase(config.database);
  try {
    const applied = await migrateToLatest(database.db);
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
  } finally {
    await database.close();
  }
}

runMain(main);
