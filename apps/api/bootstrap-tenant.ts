import type { Engine } from '../../libs/engine';

/** With COVEL_BOOTSTRAP_API_KEY set (strong enough: checked by loadConfig), makes sure a tenant with that key exists (compose, CI). */
export async function ensureBootstrapTenant(engine: Engine): Promise<void> {
  const key = engine.config.bootstrapApiKey;
  if (!key) return;
  if (await engine.tenants.findByApiKey(key)) return;
  await engine.tenants.create(engine.config.env.COVEL_BOOTSTRAP_TENANT || 'bootstrap', key).catch(async (error) => {
    if (!(await engine.tenants.findByApiKey(key))) throw error; // lost a race with another API process: fine
  });
}
