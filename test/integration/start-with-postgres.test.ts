import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { createTestDatabase, freePort, startApp, startStack } from '../support/stack';

async function tenantCount(url: string): Promise<number> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return Number((await client.query<{ n: string }>('select count(*) as n from tenants')).rows[0].n);
  } finally {
    await client.end();
  }
}

/** Issue 8 items 7 and 10 on the real PostgreSQL. */
describe('starting on PostgreSQL', () => {
  it('npm start with DATABASE_URL creates no development tenant and prints no key', async () => {
    const database = await createTestDatabase();
    const dataDir = join(mkdtempSync(join(tmpdir(), 'covel-pg-start-')), 'data');
    const env = { DATABASE_URL: database.url, REDIS_URL: '', COVEL_BOOTSTRAP_API_KEY: '', COVEL_DATA_DIR: dataDir, PORT: String(await freePort()) };
    try {
      const app = await startApp('npm start', 'apps/main.ts', env, /tenants: /);
      await app.stop();
      expect(app.output()).toContain('Covel engine ready at');
      expect(app.output()).toContain('database: PostgreSQL');
      expect(app.output()).not.toMatch(/cvl_|dev key/);
      expect(app.output()).toContain('tenants:  none created here: npm run tenant:create -- <name> prints a key');
      expect(await tenantCount(database.url)).toBe(0);
      expect(existsSync(join(dataDir, 'dev-api-key'))).toBe(false);
    } finally {
      await database.drop();
      rmSync(join(dataDir, '..'), { recursive: true, force: true });
    }
  }, 90_000);

  it('start:api binds to 127.0.0.1 by default and takes the stack bootstrap key', async () => {
    const stack = await startStack({ workers: 0 });
    try {
      expect(stack.api.output()).toMatch(new RegExp(`bound to 127\\.0\\.0\\.1:${new URL(stack.baseUrl).port}, COVEL_HOST`));
      expect(await tenantCount(stack.databaseUrl)).toBe(1);
      const { id } = await stack.client.createSession();
      expect(id).toEqual(expect.any(String));
    } finally {
      await stack.stop();
    }
  }, 90_000);
});
