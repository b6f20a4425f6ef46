import type { Engine } from '../../libs/engine';

/**
 * With COVEL_BOOTSTRAP_API_KEY set (strong enough: checked by loadConfig), makes sure a tenant with
 * that key exists (compose, CI). A key that is stored but revoked (rotated out) is left so, with a
 * warning: it is not made again, and the start goes on.
 */
export async function ensureBootstrapTenant(engine: Engine): Promise<void> {
  const key = engine.config.bootstrapApiKey;
  if (!key) return;
  const status = await engine.tenants.keyStatus(key);
  if (status === 'active') return;
  if (status === 'revoked') {
    engine.logger.warn('COVEL_BOOTSTRAP_API_KEY is a revoked key: no bootstrap tenant is made (unset it, or set a new key)');
    return;
  }
  await engine.tenants.create(engine.config.env.COVEL_BOOTSTRAP_TENANT || 'bootstrap', key).catch(async (error) => {
    if ((await engine.tenants.keyStatus(key)) === 'unknown') throw error; // lost a race with another API process: fine
  });
}
