import { Client } from 'pg';
import { AppRoleError, grantAppRole, migrateAsOwner, openDatabase } from '../../libs/events';
import { createTestDatabase, createTestRoles, REDIS_URL, startApp, startStack, type Stack, urlAs } from '../support/stack';

/** Runs `statement` as `url`'s role; resolves to the PostgreSQL error message, or null if it succeeded. */
async function errorOf(url: string, statement: string): Promise<string | null> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(statement);
    return null;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await c.end();
  }
}

/**
 * PostgreSQL with two roles: the owner migrates (`npm run migrate` with COVEL_MIGRATION_DATABASE_URL
 * and COVEL_APP_ROLE), the API and the worker connect as the app role, which can append to the
 * event log and read it but never change it, not even by turning the append-only trigger off.
 */
describe('the app role on PostgreSQL', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ workers: 1, separateRoles: true });
  }, 120_000);
  afterAll(() => stack?.stop(), 60_000);

  it('plays a turn as the app role, which cannot rewrite the event log', async () => {
    const { client } = stack;
    const { id } = await client.createSession();
    await client.playTurn(id, 'Cross the bridge');
    expect((await client.messages(id)).map((m) => m.role)).toEqual(['user', 'assistant']);
    // the processes connect as the app role: they say nothing about connecting as the owner
    expect(stack.api.output()).not.toMatch(/could disable/);

    const app = stack.databaseUrl;
    expect(await errorOf(app, `select count(*) from events`)).toBeNull();
    expect(await errorOf(app, `update events set type = 'x'`)).toMatch(/permission denied for table events/);
    expect(await errorOf(app, `delete from events`)).toMatch(/permission denied for table events/);
    expect(await errorOf(app, `truncate events`)).toMatch(/permission denied for table events/);
    expect(await errorOf(app, `alter table events disable trigger all`)).toMatch(/must be owner of table events/);
    expect(await errorOf(app, `alter table events disable trigger events_append_only`)).toMatch(/must be owner of table events/);
    expect(await errorOf(app, `set session_replication_role = replica`)).toMatch(/permission denied to set parameter "session_replication_role"/);
    expect(await errorOf(app, `drop table events`)).toMatch(/must be owner of table events/);
    expect(await errorOf(app, `insert into kysely_migration (name, timestamp) values ('x', 'now')`)).toMatch(/permission denied/);

    // exactly the grants the step gives: nothing else on events, DML on projections
    const c = new Client({ connectionString: app });
    await c.connect();
    try {
      const r = await c.query(
        `select p as privilege, has_table_privilege('events', p) as events, has_table_privilege('turn_messages', p) as projection
         from unnest(array['SELECT','INSERT','UPDATE','DELETE','TRUNCATE','REFERENCES','TRIGGER']) p`,
      );
      expect(Object.fromEntries(r.rows.map((row) => [row.privilege, [row.events, row.projection]]))).toEqual({
        SELECT: [true, true],
        INSERT: [true, true],
        UPDATE: [false, true],
        DELETE: [false, true],
        TRUNCATE: [false, false],
        REFERENCES: [false, false],
        TRIGGER: [false, false],
      });
      // the locked append (migration 0028) runs as its caller: EXECUTE granted, not SECURITY DEFINER
      const fn = await c.query(
        `select has_function_privilege(p.oid, 'EXECUTE') as execute, p.prosecdef as definer,
           exists (select 1 from aclexplode(p.proacl) a join pg_roles r on r.oid = a.grantee where r.rolname = current_user and a.privilege_type = 'EXECUTE') as granted
         from pg_proc p where p.oid = to_regprocedure('events_append_locked(bigint, text, text, integer, jsonb)')`,
      );
      // granted to the app role itself by the grants step (not only through PUBLIC's default)
      expect(fn.rows).toEqual([{ execute: true, definer: false, granted: true }]);
      const called = await c.query(`select part, at_tenant from events_append_locked(hashtextextended($1, 0), 'tenant', $1, 1, '[]')`, [id]);
      // nothing to write: the head's tenant and the session's events past version 1
      expect(called.rows[0]).toEqual({ part: 'head', at_tenant: expect.any(String) });
      expect(called.rows.length).toBeGreaterThan(1);
      expect(called.rows.slice(1).every((r) => r.part === 'missed')).toBe(true);
      // a stream's inline rebuild epoch (migration 0029), read by a one-statement append after its
      // lock: granted the same way, SECURITY INVOKER; its table is written by the rebuild (replay)
      const epoch = await c.query(
        `select has_function_privilege(p.oid, 'EXECUTE') as execute, p.prosecdef as definer, p.provolatile as volatility,
           exists (select 1 from aclexplode(p.proacl) a join pg_roles r on r.oid = a.grantee where r.rolname = current_user and a.privilege_type = 'EXECUTE') as granted
         from pg_proc p where p.oid = to_regprocedure('inline_rebuild_epoch(text, text)')`,
      );
      expect(epoch.rows).toEqual([{ execute: true, definer: false, volatility: 'v', granted: true }]);
      expect((await c.query(`select inline_rebuild_epoch('tenant', $1) as epoch`, [id])).rows).toEqual([{ epoch: '0' }]);
      const rebuilds = await c.query(
        `select p as privilege, has_table_privilege('inline_rebuilds', p) as granted from unnest(array['SELECT','INSERT','UPDATE','DELETE','TRUNCATE']) p`,
      );
      expect(Object.fromEntries(rebuilds.rows.map((row) => [row.privilege, row.granted]))).toEqual({
        SELECT: true,
        INSERT: true,
        UPDATE: true,
        DELETE: true,
        TRUNCATE: false,
      });
    } finally {
      await c.end();
    }
    // the log is intact
    const owner = new Client({ connectionString: stack.ownerUrl });
    await owner.connect();
    try {
      const r = await owner.query(`select count(*)::int as n from events where type = 'turn.committed@1' and stream_id = $1`, [id]);
      expect(r.rows[0].n).toBe(1);
    } finally {
      await owner.end();
    }
  }, 60_000);
});

describe('start-up with separate roles', () => {
  it('as the app role with no migration URL it refuses a schema that is not current, and migrates with one', async () => {
    const roles = await createTestRoles();
    const database = await createTestDatabase({ owner: roles.owner });
    try {
      const env = {
        DATABASE_URL: urlAs(database.url, roles.app),
        REDIS_URL,
        COVEL_QUEUE_PREFIX: `covel-it-${database.name}`,
        PORT: '0',
      };
      const refused = await startApp('api', 'apps/api/main.ts', env, /listening on/).then(
        async (p) => {
          await p.stop();
          return '';
        },
        (e: Error) => e.message,
      );
      expect(refused).toMatch(/schema is not current.*missing migrations: 0001_event_log/s);
      expect(refused).toMatch(/COVEL_MIGRATION_DATABASE_URL/);

      // migrated by the owner but never granted: the app role is told which privileges it lacks
      await migrateAsOwner({ kind: 'postgres', url: urlAs(database.url, roles.owner) });
      const ungranted = await startApp('api', 'apps/api/main.ts', env, /listening on/).then(
        async (p) => {
          await p.stop();
          return '';
        },
        (e: Error) => e.message,
      );
      // every table, in name order (api_keys, migration 0024, comes before events)
      expect(ungranted).toMatch(new RegExp(`role ${roles.app} lacks (\\S+ on \\S+, )*SELECT on events, INSERT on events, `));

      // with the owner's URL the API migrates at start-up and grants the app role, then serves as it
      const api = await startApp(
        'api',
        'apps/api/main.ts',
        { ...env, COVEL_MIGRATION_DATABASE_URL: urlAs(database.url, roles.owner), COVEL_APP_ROLE: roles.app },
        /listening on/,
      );
      await api.stop();
      expect(api.output()).not.toMatch(/could disable/);
      expect(await errorOf(urlAs(database.url, roles.app), `truncate events`)).toMatch(/permission denied/);

      // the grants step refuses to make the owner the app role
      const owner = await openDatabase({ kind: 'postgres', url: urlAs(database.url, roles.owner), poolSize: 1 });
      try {
        await expect(grantAppRole(owner.db, roles.owner)).rejects.toBeInstanceOf(AppRoleError);
      } finally {
        await owner.close();
      }
    } finally {
      await database.drop();
      await roles.drop();
    }
  }, 90_000);
});
