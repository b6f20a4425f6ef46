import { loadConfig } from '../libs/engine';
import { createProjectionRunner } from '../libs/engine';
import { openDatabase, prepareSchema } from '../libs/events';
import { runMain } from '../apps/process-lifecycle';

/** `npm run replay`: drops every projection's rows and rebuilds them from the event log. */
async function main() {
  const config = loadConfig();
  const database = await openDatabase(config.database);
  try {
    for (const warning of (await prepareSchema(database, config.database)).warnings) console.warn(warning);
    const started = Date.now();
    const applied = await createProjectionRunner(database.db).replay((name, position) => console.log(`  ${name}: rebuilt up to position ${position}`));
    console.log(`replayed ${applied} event applications in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await database.close();
  }
}

runMain(main);
