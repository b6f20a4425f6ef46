import { Client } from 'pg';
import { openDatabase, type OpenDatabase } from '../../libs/events';
import { createTestDatabase } from '../support/stack';
import { until } from '../support/until';

/**
 * `OpenDatabase.listen` on the real PostgreSQL (`SharedListen`): every channel of a handle on one
 * LISTEN connection (a notifying commit wakes every listening backend of the database, whatever
 * the channel), opened by the first subscription and ended with the last; a lost connection ends
 * each subscription on it once, and the next `listen` opens another.
 */
describe('LISTEN on PostgreSQL: one connection per database handle', () => {
  let database: { name: string; url: string; drop(): Promise<void> };
  let open: OpenDatabase;
  let admin: Client;

  beforeAll(async () => {
    database = await createTestDatabase();
    open = await openDatabase({ kind: 'postgres', url: database.url });
    admin = new Client({ connectionString: database.url });
    await admin.connect();
  }, 60_000);

  afterAll(async () => {
    await admin?.end();
    await open?.close();
    await database?.drop();
  }, 60_000);

  /** The database's backends other than the admin's (the pool opens none: no statement is run through it). */
  async function backends(): Promise<number[]> {
    const r = await admin.query<{ pid: number }>(`select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()`, [database.name]);
    return r.rows.map((row) => row.pid);
  }

  /** Checks `condition` until it holds (no time is asserted). */

  it('two channels, three subscriptions: one connection; each hears its channel; a loss is heard once by each; the last close ends it', async () => {
    const heard: string[] = [];
    const lost: string[] = [];
    const subscribe = (channel: string, name: string) => open.listen(channel, (payload) => heard.push(`${name}:${payload}`), { onLost: () => lost.push(name) });
    const [a1, a2, b] = await Promise.all([subscribe('chan_a', 'a1'), subscribe('chan_a', 'a2'), subscribe('chan_b', 'b')]);
    expect(await backends()).toHaveLength(1);

    await admin.query(`select pg_notify('chan_a', 'x'), pg_notify('chan_b', 'y')`);
    await until(() => heard.length === 3, 'three notifications heard');
    expect(heard.sort()).toEqual(['a1:x', 'a2:x', 'b:y']);

    // one subscription closed: the connection stays for the others
    await a2.close();
    await admin.query(`select pg_notify('chan_a', 'z')`);
    await until(() => heard.includes('a1:z'), 'a1 hears z');
    expect(heard.filter((h) => h.startsWith('a2:'))).toEqual(['a2:x']);
    expect(await backends()).toHaveLength(1);

    // the connection lost: each subscription still on it hears it once, the closed one not at all
    const [pid] = await backends();
    await admin.query('select pg_terminate_backend($1)', [pid]);
    await until(() => lost.length === 2, 'both losses heard');
    expect(lost.sort()).toEqual(['a1', 'b']);

    // the next listen opens a new connection; its last close ends it
    const again = await subscribe('chan_b', 'b2');
    const [newPid] = await backends();
    expect(newPid).not.toBe(pid);
    await admin.query(`select pg_notify('chan_b', 'w')`);
    await until(() => heard.includes('b2:w'), 'b2 hears w');
    await Promise.all([a1.close(), b.close()]); // after the loss: nothing to end
    await again.close();
    await until(async () => (await backends()).length === 0, 'the connection ended');
    expect(lost.sort()).toEqual(['a1', 'b']);
  });

  it('a closed channel is unlistened on the connection the others keep; a subscriber that throws stops no other', async () => {
    const heard: string[] = [];
    let thrown = 0;
    {
      const thrower = await open.listen('chan_c', () => {
        thrown += 1;
        throw new Error('boom');
      });
      const c = await open.listen('chan_c', (payload) => heard.push(`c:${payload}`));
      const d = await open.listen('chan_d', (payload) => heard.push(`d:${payload}`));
      await admin.query(`select pg_notify('chan_c', '1')`);
      await until(() => heard.includes('c:1'), 'c hears 1 beside the thrower');
      expect(thrown).toBe(1);

      await Promise.all([thrower.close(), c.close()]);
      const [listener] = (
        await admin.query<{ query: string }>(`select query from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()`, [database.name])
      ).rows;
      expect(listener?.query).toBe('unlisten "chan_c"');
      await admin.query(`select pg_notify('chan_d', '2')`);
      await until(() => heard.includes('d:2'), 'd hears 2');
      await d.close();
      await until(async () => (await backends()).length === 0, 'the connection ended');
    }
  });

  it('a listen whose connection cannot be made rejects, and the next one connects', async () => {
    const unreachable = await openDatabase({ kind: 'postgres', url: 'postgres://postgres@127.0.0.1:1/none', connectTimeoutMs: 500 });
    await expect(unreachable.listen('chan_a', () => undefined)).rejects.toThrow();
    await unreachable.close();
    const listening = await open.listen('chan_a', () => undefined);
    expect(await backends()).toHaveLength(1);
    await listening.close();
    await until(async () => (await backends()).length === 0, 'the connection ended');
  });
});
