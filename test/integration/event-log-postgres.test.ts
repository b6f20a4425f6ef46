import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type Kysely, sql } from 'kysely';
import { ConcurrencyError, EventStore, openDatabase, type OpenDatabase } from '../../libs/events';
import { ASYNC_PROJECTIONS, createAsyncProjector } from '../../libs/engine';
import { useMigratedDatabase } from '../support/migrated-database';
import { dumpProjections } from '../support/projection-dump';
import { startStack } from '../support/stack';
import * as lz4Migration from '../../migrations/0030_lz4_bodies';
import * as preferencesIndex from '../../migrations/0031_events_stream_preferences';

const run = promisify(execFile);
/** The database as a migration takes it (kysely's migrations are untyped). */
const asMigrated = (open: OpenDatabase) => open.db as unknown as Kysely<unknown>;

describe('event log on the real PostgreSQL', () => {
  const database = useMigratedDatabase({ poolSize: 20 });

  it('UPDATE and DELETE on events fail', async () => {
    const store = new EventStore(database.open.db);
    await store.append({
      tenantId: 't',
      streamId: 's',
      expectedVersion: 0,
      events: [{ type: 'session.created@1', data: { sessionId: 's', worldId: null, locale: 'en' } }],
    });
    await expect(sql`update events set type = 'x'`.execute(database.open.db)).rejects.toThrow(/append-only/);
    await expect(sql`delete from events`.execute(database.open.db)).rejects.toThrow(/append-only/);
    expect(await store.readStream('s')).toHaveLength(1);
  });

  it('20 concurrent appends at one version on a pool: one wins, the rest get ConcurrencyError, none lost or doubled', async () => {
    const store = new EventStore(database.open.db);
    const streamId = randomUUID();
    await store.append({
      tenantId: 't',
      streamId,
      expectedVersion: 0,
      events: [{ type: 'session.created@1', data: { sessionId: streamId, worldId: null, locale: 'en' } }],
    });
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        store.append({
          tenantId: 't',
          streamId,
          expectedVersion: 1,
          events: [{ type: 'player-input.submitted@1', data: { executionId: `e${i}`, turnId: `t${i}`, messageId: `m${i}`, text: String(i) } }],
        }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(ConcurrencyError);
    expect((await store.readStream(streamId)).map((e) => e.streamVersion)).toEqual([1, 2]);
  });

  it('a big body is stored lz4-compressed where the server has lz4 (migration 0030), and read back as appended', async () => {
    const store = new EventStore(database.open.db);
    const streamId = randomUUID();
    // ~60 KB of compressible text: over the TOAST threshold, compressed on insert
    const text = Array.from({ length: 2_000 }, (_, i) => `line ${i} of a long player input, é 😀`).join('\n');
    await store.append({
      tenantId: 't',
      streamId,
      expectedVersion: 0,
      events: [
        { type: 'session.created@1', data: { sessionId: streamId, worldId: null, locale: 'en' } },
        { type: 'player-input.submitted@1', data: { executionId: 'e1', turnId: 't1', messageId: 'm1', text } },
      ],
    });
    const { rows } = await sql<{ method: string | null; lz4: boolean }>`
      select pg_column_compression(data) as method,
        exists (select 1 from pg_settings where name = 'default_toast_compression' and 'lz4' = any(enumvals)) as lz4
      from events where stream_id = ${streamId} and stream_version = 2`.execute(database.open.db);
    expect(rows[0].method).toBe(rows[0].lz4 ? 'lz4' : 'pglz');
    const [, input] = await store.readStream(streamId);
    expect(input.data).toEqual({ executionId: 'e1', turnId: 't1', messageId: 'm1', text });
  });

  it('migration 0030 waits at most its lock timeout behind a long transaction on events, changes nothing then, and applies once it ends', async () => {
    const compression = async () =>
      (
        await sql<{ c: string }>`select attcompression as c from pg_attribute where attrelid = 'events'::regclass and attname = 'data'`.execute(
          database.open.db,
        )
      ).rows[0].c;
    const lz4 = (
      await sql<{ lz4: boolean }>`select exists (select 1 from pg_settings where name = 'default_toast_compression' and 'lz4' = any(enumvals)) as lz4`.execute(
        database.open.db,
      )
    ).rows[0].lz4;
    await lz4Migration.down(asMigrated(database.open));
    expect(await compression()).toBe('');
    const reader = await database.open.db.connection().execute(async (conn) => {
      // a long reader (a replay, say) holds ACCESS SHARE on events until its transaction ends
      await sql`begin`.execute(conn);
      await sql`select count(*) from events`.execute(conn);
      const started = Date.now();
      const error = await lz4Migration.up(asMigrated(database.open)).then(
        () => null,
        (e: unknown) => e as { code?: string },
      );
      const waitedMs = Date.now() - started;
      await sql`commit`.execute(conn);
      return { error, waitedMs };
    });
    if (lz4) {
      expect(reader.error?.code).toBe('55P03'); // lock_not_available: it did not queue up forever
      expect(reader.waitedMs).toBeLessThan(60_000);
      expect(await compression()).toBe(''); // nothing half-made: the block rolled back
    }
    // as the migrator runs it: in a transaction, whose own lock timeout is as before after it
    const after = await database.open.db.transaction().execute(async (trx) => {
      await lz4Migration.up(trx as unknown as Kysely<unknown>);
      return (await sql<{ t: string }>`select current_setting('lock_timeout') as t`.execute(trx)).rows[0].t;
    });
    expect(after).toBe('0');
    expect(await compression()).toBe(lz4 ? 'l' : '');
  }, 60_000);

  it('migration 0031 waits at most its lock timeout behind a transaction writing events, builds nothing then, and applies once it ends', async () => {
    const indexed = async () =>
      (await sql<{ present: boolean }>`select to_regclass('events_stream_preferences') is not null as present`.execute(database.open.db)).rows[0].present;
    await preferencesIndex.down(asMigrated(database.open));
    expect(await indexed()).toBe(false);
    const writer = await database.open.db.connection().execute(async (conn) => {
      // a transaction that writes the log (an append's lock) until it ends: the build's SHARE lock waits for it
      await sql`begin`.execute(conn);
      await sql`lock table events in row exclusive mode`.execute(conn);
      const error = await preferencesIndex.up(asMigrated(database.open)).then(
        () => null,
        (e: unknown) => e as { code?: string },
      );
      await sql`commit`.execute(conn);
      return { error };
    });
    expect(writer.error?.code).toBe('55P03'); // lock_not_available: it did not queue up (and hold up appends) forever
    expect(await indexed()).toBe(false);
    // as the migrator runs it: in a transaction, whose own lock timeout is as before after it
    const after = await database.open.db.transaction().execute(async (trx) => {
      await preferencesIndex.up(trx as unknown as Kysely<unknown>);
      return (await sql<{ t: string }>`select current_setting('lock_timeout') as t`.execute(trx)).rows[0].t;
    });
    expect(after).toBe('0');
    expect(await indexed()).toBe(true);
  }, 60_000);
});

describe('npm run replay on PostgreSQL', () => {
  it('rebuilds every projection identical to the live one', async () => {
    const stack = await startStack({ workers: 1 });
    try {
      const { client } = stack;
      const sessions: string[] = [];
      for (let s = 0; s < 3; s++) {
        const { id } = await client.createSession();
        sessions.push(id);
        for (let t = 0; t < 3; t++) await client.waitFor((await client.submit(id, `s${s} t${t}`)).executionId, 30_000);
      }
      const open = await openDatabase({ kind: 'postgres', url: stack.databaseUrl });
      try {
        // the inline views are current; the async ones (the worker's projector) may be a batch
        // behind: wait until each has passed every session's last event (waiting does no work)
        const projector = createAsyncProjector(open.db, { owner: 'test-wait' });
        for (const projection of ASYNC_PROJECTIONS)
          for (const streamId of sessions)
            expect(await projector.waitFor({ projection: projection.name, streamId, timeoutMs: 20_000 })).toEqual({ status: 'reached' });
        const live = await dumpProjections(open.db);
        expect(live.turn_messages).toHaveLength(18);
        const { stdout } = await run('npm', ['run', 'replay'], { cwd: join(__dirname, '..', '..'), env: { ...process.env, ...stack.env } });
        expect(stdout).toMatch(/replayed/);
        expect(await dumpProjections(open.db)).toEqual(live);
      } finally {
        await open.close();
      }
    } finally {
      await stack.stop();
    }
  }, 120_000);
});
