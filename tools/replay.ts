import { loadConfig } from '../libs/engine';
import { createProjectionRunner } from '../libs/engine';
import { openDatabase, prepareSchema } from '../libs/events';
import { runMain } from '../apps/process-lifecycle';

/**
 * `npm run replay`: drops every projection's rows (and recorded failures) and rebuilds them from
 * the event log. A stream a projection still cannot apply is reported and left stopped; the exit
 * code is then 1.
 */
async function main() {
  const config = loadConfig();
  const database = await openDatabase(config.database);
  try {
    for (const warning of (await prepareSchema(database, config.database)).warnings) console.warn(warning);
    const started = Date.now();
    const runner = createProjectionRunner(database.db, { log: (m) => console.log(m), warn: (m) => console.warn(m), error: (m) => console.error(m) });
    const applied = await runner.replay((name, position) => console.log(`  ${name}: rebuilt up to position ${position}`));
    console.log(`replayed ${applied} event applications in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const failing = (await runner.status()).filter((p) => p.state === 'failing');
    for (const p of failing) console.error(`projection ${p.name} is stopped at ${p.failing} stream(s); the events of those streams are not applied`);
    if (failing.length > 0) process.exitCode = 1;
  } finally {
    await database.close();
  }
}

runMain(main);
