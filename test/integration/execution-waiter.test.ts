import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { ExecutionWaiter, type ExecutionWaiterOptions, migrateToLatest, openDatabase, type OpenDatabase, ReadModels } from '../../libs/events';
import { createTestDatabase } from '../support/stack';
import { until } from '../support/until';

/**
 * ExecutionWaiter on the real PostgreSQL: migration 0010's trigger notifies, the waiter's one LISTEN
 * connection wakes the waiters. Its connection is killed with pg_terminate_backend to show the
 * re-LISTEN and the fallback poll. A timer or poll that should not answer is set to 10 minutes,
 * past each test's own timeout: an answer can only have come the way the test names.
 */
describe('ExecutionWaiter on PostgreSQL', () => {
  const NEVER = 600_000;
  let database: { name: string; url: string; drop(): Promise<void> };
  let open: OpenDatabase;
  let admin: Client;
  let readModels: ReadModels;
  const waiters: ExecutionWaiter[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    open = await openDatabase({ kind: 'postgres', url: database.url });
    await migrateToLatest(open.db);
    readModels = new ReadModels(open.db);
    admin = new Client({ connectionString: database.url });
    await admin.connect();
  }, 60_000);

  afterAll(async () => {
    await Promise.all(waiters.map((w) => w.close()));
    await admin?.end();
    await open?.close();
    await database?.drop();
  }, 60_000);

  function newWaiter(options: Partial<ExecutionWaiterOptions>): ExecutionWaiter {
    const waiter = new ExecutionWaiter({
      listen: (channel, onNotify, o) => open.listen(channel, onNotify, o),
      read: (tenantId, executionId) => readModels.execution(tenantId, executionId),
      ...options,
    });
    waiters.push(waiter);
    return waiter;
  }

  /** An execution row as the executions read model holds it. */
  async function execution(tenantId: string, status = 'running'): Promise<string> {
    const id = randomUUID();
    await admin.query(
      `insert into executions (execution_id, tenant_id, session_id, turn_id, status, attempts, submitted_version, submitted_at, updated_at)
       values ($1, $2, $3, $4, $5, 1, 1, now(), now())`,
      [id, tenantId, randomUUID(), randomUUID(), status],
    );
    return id;
  }

  const setStatus = (id: string, status: string) => admin.query('update executions set status = $2, updated_at = now() where execution_id = $1', [id, status]);

  async function listenerPids(): Promise<number[]> {
    const r = await admin.query<{ pid: number }>(`select pid from pg_stat_activity where datname = $1 and query ilike 'listen %'`, [database.name]);
    return r.rows.map((row) => row.pid);
  }

  /** Checks `condition` until it holds (the processes get there on their own; no time is asserted). */

  it('a notification wakes the waiter: committed and failed, each for its own tenant only', async () => {
    const waiter = newWaiter({ pollIntervalMs: NEVER });
    const tenant = randomUUID();
    const [one, two] = [await execution(tenant), await execution(tenant)];
    const waits = [
      waiter.wait({ tenantId: tenant, executionId: one, timeoutMs: NEVER }),
      waiter.wait({ tenantId: tenant, executionId: two, timeoutMs: NEVER }),
    ];
    // another tenant asking for the same id: nothing to wait for
    expect(await waiter.wait({ tenantId: randomUUID(), executionId: one, timeoutMs: NEVER })).toBeNull();
    await until(() => waiter.listenState === 'listening' && waiter.pending === 2, 'listening with two waiters');
    await setStatus(one, 'committed');
    await setStatus(two, 'failed');
    const [a, b] = await Promise.all(waits);
    expect([a?.executionId, a?.status]).toEqual([one, 'committed']);
    expect([b?.executionId, b?.status]).toEqual([two, 'failed']);
    expect(await listenerPids()).toHaveLength(1); // one LISTEN connection, shared
    await waiter.close();
    await until(async () => (await listenerPids()).length === 0, 'closed');
  }, 20_000);

  it('an execution already ended is answered at once; one still running, after its timeout', async () => {
    const waiter = newWaiter({ pollIntervalMs: NEVER });
    const tenant = randomUUID();
    const done = await execution(tenant, 'committed');
    expect((await waiter.wait({ tenantId: tenant, executionId: done, timeoutMs: NEVER }))?.status).toBe('committed');
    const running = await execution(tenant);
    expect((await waiter.wait({ tenantId: tenant, executionId: running, timeoutMs: 30 }))?.status).toBe('running');
    await waiter.close();
    await until(async () => (await listenerPids()).length === 0, 'closed');
  }, 20_000);

  it('after pg_terminate_backend it LISTENs again: an end missed meanwhile is read, and the next is notified', async () => {
    // no fallback poll here: only the re-LISTEN (and the look at every waiter after it) can answer
    const waiter = newWaiter({ pollIntervalMs: NEVER, reconnectDelayMs: 1_000 });
    const tenant = randomUUID();
    const missed = await execution(tenant);
    const waiting = waiter.wait({ tenantId: tenant, executionId: missed, timeoutMs: NEVER });
    await until(() => waiter.listenState === 'listening' && waiter.pending === 1, 'listening');
    const [before] = await listenerPids();
    await admin.query('select pg_terminate_backend($1)', [before]);
    await until(() => waiter.listenState === 'down', 'down');
    await setStatus(missed, 'committed'); // its notification has no listener
    expect((await waiting)?.status).toBe('committed');
    expect(waiter.listenState).toBe('listening');
    const after = await listenerPids();
    expect(after).toHaveLength(1);
    expect(after[0]).not.toBe(before);

    const next = await execution(tenant);
    const nextWait = waiter.wait({ tenantId: tenant, executionId: next, timeoutMs: NEVER });
    await until(() => waiter.pending === 1, 'waiting');
    await setStatus(next, 'committed');
    expect((await nextWait)?.status).toBe('committed');
    await waiter.close();
    await until(async () => (await listenerPids()).length === 0, 'closed');
  }, 30_000);

  it('a watch (a worker running the execution) reads nothing until the end is notified: a cancel (migration 0021) is heard; a watch ended first hears nothing', async () => {
    let reads = 0;
    const waiter = newWaiter({
      pollIntervalMs: NEVER,
      read: (tenantId, executionId) => {
        reads++;
        return readModels.execution(tenantId, executionId);
      },
    });
    const tenant = randomUUID();
    const [cancelled, left] = [await execution(tenant), await execution(tenant)];
    const stop = new AbortController();
    const watch = await waiter.watch({ tenantId: tenant, executionId: cancelled, signal: new AbortController().signal });
    const leftWatch = await waiter.watch({ tenantId: tenant, executionId: left, signal: stop.signal });
    // resolved once listening: an end from now on is heard
    expect(waiter.listenState).toBe('listening');
    expect(reads).toBe(0);
    stop.abort();
    expect(waiter.pending).toBe(1);
    await setStatus(left, 'committed');
    await setStatus(cancelled, 'cancelled');
    expect((await watch.ended).status).toBe('cancelled');
    expect(reads).toBe(0); // the end's notification carries the row (migration 0027)
    let heard = false;
    void leftWatch.ended.then(() => (heard = true));
    await waiter.close();
    expect(heard).toBe(false);
  }, 20_000);

  it('a wait reads once, when it starts: the end’s notification carries the row as its transaction committed it, to its tenant only; a row too long to notify is read', async () => {
    let reads = 0;
    const waiter = newWaiter({
      pollIntervalMs: NEVER,
      read: (tenantId, executionId) => {
        reads++;
        return readModels.execution(tenantId, executionId);
      },
    });
    const tenant = randomUUID();
    const other = randomUUID();
    const [one, long] = [await execution(tenant), await execution(tenant)];
    const waits = [
      waiter.wait({ tenantId: tenant, executionId: one, timeoutMs: NEVER }),
      waiter.wait({ tenantId: tenant, executionId: long, timeoutMs: NEVER }),
    ];
    // another tenant's wait for the same id: answered by its first read (null), never with the row
    expect(await waiter.wait({ tenantId: other, executionId: one, timeoutMs: NEVER })).toBeNull();
    await until(() => waiter.listenState === 'listening' && waiter.pending === 2, 'listening');
    const started = reads;
    // the end and a later write to the row in one transaction: the row notified is the committed one
    await admin.query('begin');
    await admin.query(`update executions set status = 'failed', error_code = 'X', error_message = 'first' where execution_id = $1`, [one]);
    await admin.query(`update executions set error_message = 'as committed', attempts = 7 where execution_id = $1`, [one]);
    await admin.query('commit');
    await admin.query(`update executions set status = 'failed', error_code = 'Y', error_message = $2 where execution_id = $1`, [long, 'é'.repeat(5_000)]);
    const [a, b] = await Promise.all(waits);
    expect(a).toEqual(await readModels.execution(tenant, one));
    expect([a?.status, a?.attempts, a?.error]).toEqual(['failed', 7, { code: 'X', message: 'as committed' }]);
    expect(b?.error?.message).toBe('é'.repeat(5_000));
    expect(reads - started).toBe(1); // the row too long to notify, only
  }, 20_000);

  it('while the LISTEN connection is down, the fallback poll answers', async () => {
    // reconnect only after 10 minutes: the poll is the only way left
    const waiter = newWaiter({ pollIntervalMs: 100, reconnectDelayMs: NEVER });
    const tenant = randomUUID();
    const first = await execution(tenant);
    const firstWait = waiter.wait({ tenantId: tenant, executionId: first, timeoutMs: NEVER });
    await until(() => waiter.listenState === 'listening', 'listening');
    const pids = await listenerPids();
    await admin.query('select pg_terminate_backend(pid) from unnest($1::int[]) as pid', [pids]);
    await until(() => waiter.listenState === 'down', 'down');
    // one waiting from before the loss, one that starts while it is down
    const second = await execution(tenant);
    const secondWait = waiter.wait({ tenantId: tenant, executionId: second, timeoutMs: NEVER });
    await setStatus(first, 'committed');
    await setStatus(second, 'failed');
    expect((await firstWait)?.status).toBe('committed');
    expect((await secondWait)?.status).toBe('failed');
    expect(waiter.listenState).toBe('down');
  }, 20_000);

  /** `promise`, or a failure after `ms`: a wait that should be answered at once must not sit until its own timeout. */
  function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not answered within ${ms} ms`)), ms)));
    return Promise.race([promise, late]).finally(() => clearTimeout(timer));
  }

  function countingWaiter(options: Partial<ExecutionWaiterOptions> = {}) {
    const reads: string[] = [];
    const waiter = newWaiter({
      pollIntervalMs: NEVER,
      read: (tenantId, executionId) => {
        reads.push(executionId);
        return readModels.execution(tenantId, executionId);
      },
      ...options,
    });
    return { waiter, reads };
  }

  /** As the API submits: the mark taken while listening, the execution appended (here inserted), then registered. */
  async function submit(waiter: ExecutionWaiter, tenant: string): Promise<string> {
    const mark = await waiter.beforeSubmit();
    expect(mark).not.toBeNull();
    const id = await execution(tenant, 'queued');
    waiter.submittedAfter(mark, tenant, id);
    return id;
  }

  it('a wait for an execution this process submitted while listening reads nothing: its end’s notification answers it; any other tenant’s, a later wait and another process read', async () => {
    const { waiter, reads } = countingWaiter();
    const tenant = randomUUID();
    const id = await submit(waiter, tenant);
    const waiting = waiter.wait({ tenantId: tenant, executionId: id, timeoutMs: NEVER });
    // another tenant naming the id is read (and answered: not found), never told anything of the submission
    expect(await waiter.wait({ tenantId: randomUUID(), executionId: id, timeoutMs: NEVER })).toBeNull();
    await until(() => waiter.pending === 1, 'waiting');
    expect(reads).toEqual([id]); // the other tenant's only
    // a wait that times out reads the state it answers
    expect((await waiter.wait({ tenantId: tenant, executionId: id, timeoutMs: 30 }))?.status).toBe('queued');
    expect(reads).toEqual([id, id]);
    await setStatus(id, 'committed');
    expect((await waiting)?.status).toBe('committed');
    expect(reads).toHaveLength(2);
    // the end heard: a later wait reads, and is answered at once
    expect((await within(waiter.wait({ tenantId: tenant, executionId: id, timeoutMs: NEVER }), 5_000, 'a wait after the end'))?.status).toBe('committed');
    expect(reads).toHaveLength(3);
    // another process (its own waiter) knows nothing of the submission: it reads
    const { waiter: elsewhere, reads: elsewhereReads } = countingWaiter();
    expect((await within(elsewhere.wait({ tenantId: tenant, executionId: id, timeoutMs: NEVER }), 5_000, 'another process'))?.status).toBe('committed');
    expect(elsewhereReads).toEqual([id]);
    await Promise.all([waiter.close(), elsewhere.close()]);
  }, 30_000);

  it('an end heard while the execution was being submitted leaves its waits to read (answered at once)', async () => {
    const { waiter, reads } = countingWaiter();
    const tenant = randomUUID();
    const mark = await waiter.beforeSubmit();
    const id = await execution(tenant, 'queued');
    // the end commits before the submission is registered; a later end, waited for, shows it was heard
    const probe = await execution(tenant);
    const probeWait = waiter.wait({ tenantId: tenant, executionId: probe, timeoutMs: NEVER });
    await until(() => waiter.pending === 1, 'waiting for the probe');
    await setStatus(id, 'committed');
    await setStatus(probe, 'committed');
    await probeWait;
    waiter.submittedAfter(mark, tenant, id);
    expect((await within(waiter.wait({ tenantId: tenant, executionId: id, timeoutMs: NEVER }), 5_000, 'ended while submitted'))?.status).toBe('committed');
    expect(reads).toContain(id);
    await waiter.close();
  }, 30_000);

  it('a lost LISTEN connection leaves every submitted execution’s waits to read: lost after the submission, or between the mark and the append’s end', async () => {
    const { waiter } = countingWaiter({ reconnectDelayMs: 200 });
    const tenant = randomUUID();
    const drop = async () => {
      await admin.query('select pg_terminate_backend(pid) from unnest($1::int[]) as pid', [await listenerPids()]);
      await until(() => waiter.listenState === 'down', 'down');
    };
    // submitted, then the connection lost, the end committed while nobody listened, the connection back
    const after = await submit(waiter, tenant);
    await drop();
    await setStatus(after, 'committed');
    await until(() => waiter.listenState === 'listening', 'listening again');
    expect((await within(waiter.wait({ tenantId: tenant, executionId: after, timeoutMs: NEVER }), 5_000, 'lost after'))?.status).toBe('committed');

    // the mark taken on one connection, the append registered on the next: proves nothing
    const mark = await waiter.beforeSubmit();
    const between = await execution(tenant, 'queued');
    await drop();
    await setStatus(between, 'failed');
    await until(() => waiter.listenState === 'listening', 'listening again');
    waiter.submittedAfter(mark, tenant, between);
    expect((await within(waiter.wait({ tenantId: tenant, executionId: between, timeoutMs: NEVER }), 5_000, 'lost between'))?.status).toBe('failed');
    await waiter.close();
  }, 30_000);
});
