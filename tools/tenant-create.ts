import { loadConfig } from '../libs/engine';
import { openDatabase, prepareSchema, TenantStore } from '../libs/events';
import { runMain } from '../apps/process-lifecycle';

/** `npm run tenant:create -- <name>`: creates a tenant and prints its first API key (every scope) once; recorded as `tenant.created@1` by the operator. */
async function main() {
  const name = process.argv[2];
  if (!name) throw new Error('usage: npm run tenant:create -- <name>');
  const config = loadConfig();
  const database = await openDatabase(config.database);
  try {
    for (const warning of (await prepareSchema(database, config.database)).warnings) console.warn(warning);
    const { tenant, apiKey } = await new TenantStore(database.db, { pepper: config.keyPepper }).create(name);
    console.log(`tenant ${tenant.name} (${tenant.id})\napi key: ${apiKey}\n(store it now: only its hash is kept)`);
  } finally {
    await database.close();
  }
}

runMain(main);
