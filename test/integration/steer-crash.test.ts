import { type Kysely, sql } from 'kysely';
import { Client } from 'pg';
import { EngineUnreachableError } from '../../apps/play/play-client';
import { ProviderEmulator } from '../../libs/emulator';
import { engineInlineProjections } from '../../libs/engine';
import { type Database, EventStore, openDatabase, type OpenDatabase, rebuildInline } from '../../libs/events';
import { endsOf, LONG_STORY, SHORT_STORY, SLOW_MARK, storyScript } from '../support/cancel';
import { type CrashStack, crashStack, sleep } from '../support/crash-stack';
import { openEventStream } from '../support/sse-client';
import type { Stack } from '../support/stack';

/** How long a request is sent again while the API is down (a hang guard). */
const ANSWER_WITHIN_MS = 60_000;

/** One answer of the API: its status, body, and whether it replays an earlier request with the same key. */
interface Answer {
  status: number;
  body: Record<string, unknown>;
  replayed: boolean;
}

/** A steering (or input) request, sent with an Idempotency-Key. */
interface KeyedRequest {
  key: string;
  method: 'POST';
  path: string;
  body: Record<string, unknown>;
}

/** The inline read models of these sessions, every row in a fixed order: what a rebuild from the log must give again. */
async function inlineRows(db: Kysely<Database>, sessionIds: readonly string[]) {
  const rows = async (table: string, order: string) =>
    (await sql`select * from ${sql.table(table)} where session_id = any(${[...sessionIds]}) order by ${sql.raw(order)}`.execute(db)).rows;
  return {
    executions: await rows('executions', 'execution_id'),
    turn_messages: await rows('turn_messages', 'session_id, ord'),
    history_watermarks: await rows('history_watermarks', 'session_id'),
    summaries: await rows('summaries', 'session_id, seq'),
    plugin_data: await rows('plugin_data', 'session_id, plugin_id, namespace, created_position'),
    plugin_data_namespaces: await rows('plugin_data_namespaces', 'session_id, plugin_id, namespace'),
  };
}

/**
 * Kill -9 during steering (issue 30), on PostgreSQL + BullMQ with the API and workers as their own
 * processes. A revert (`turn.reverted@1`) and a branch (`session.branched@1` + `session.created@1`)
 * are each one append of the API, their inline read models (turn_messages, summaries, plugin data,
 * watermarks, folded again along the story path) written in the append's transaction: a kill
 * leaves each request wholly done or not at all, a repeat with its Idempotency-Key answers the
 * first result or does it once, and the rows equal a rebuild from the log. A cancel
 * (`execution.cancelled@1`) and the worker running the turn killed around it: the execution ends as
 * exactly one of committed and cancelled, and the session takes its next input.
 */
describe('kill -9 during a revert, a branch and a cancel (PostgreSQL + BullMQ)', () => {
  let emulator: ProviderEmulator;
  let crash: CrashStack;
  let stack: Stack;
  let db: Client;
  let open: OpenDatabase;
  /** Tries that got no answer (the API down, or killed while it served them): for the figures logged. */
  let unanswered = 0;
  beforeAll(async () => {
    // the model streams a word every 80 ms (a turn’s reply ~0.5 s, the long one of a SLOWLY input ~2.5 s): a worker
    // can be killed and a turn cancelled while a call is out; a killed worker's job is taken over within ~3 s
    emulator = await new ProviderEmulator({ chunkDelayMs: 80, script: storyScript() }).start();
    crash = await crashStack({
      workers: 2,
      env: { COVEL_EMULATOR_URL: emulator.url },
      workerEnv: { COVEL_JOB_LOCK_MS: '2000', COVEL_STALLED_INTERVAL_MS: '500' },
    });
    ({ stack, db } = crash);
    open = await openDatabase({ kind: 'postgres', url: stack.databaseUrl });
  }, 120_000);
  afterAll(async () => {
    await open?.close();
    await crash?.stop();
    await emulator?.stop();
  }, 60_000);

  /** One try: the answer, or null when the API gave none (down, or killed while it served the request). */
  async function send(request: KeyedRequest): Promise<Answer | null> {
    let res: Response;
    try {
      res = await fetch(`${stack.baseUrl}${request.path}`, {
        method: request.method,
        headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json', 'idempotency-key': request.key },
        body: JSON.stringify(request.body),
      });
    } catch {
      return null;
    }
    try {
      const body = (await res.json()) as Record<string, unknown>;
      return { status: res.status, body, replayed: res.headers.get('idempotent-replayed') === 'true' };
    } catch {
      return null; // the connection was cut while the answer was read
    }
  }

  /** Sends the request again (same key) until the API answers it; a 5xx is no answer either (the API may be going down). */
  async function answered(request: KeyedRequest): Promise<Answer> {
    for (const deadline = Date.now() + ANSWER_WITHIN_MS; Date.now() < deadline; await sleep(50)) {
      const answer = await send(request);
      if (answer && answer.status < 500) return answer;
      unanswered++;
    }
    throw new Error(`${request.method} ${request.path} (key ${request.key}): no answer within ${ANSWER_WITHIN_MS} ms`);
  }

  /** Waits for the execution to end, through API restarts (the long-poll is asked again once the API is back): committed or cancelled. */
  async function ended(executionId: string): Promise<string> {
    for (const deadline = Date.now() + ANSWER_WITHIN_MS; ; await sleep(100)) {
      try {
        return await stack.client.waitFor(executionId, Math.max(1, deadline - Date.now()));
      } catch (error) {
        if (!(error instanceof EngineUnreachableError) || Date.now() > deadline) throw error;
      }
    }
  }

  async function committed(executionId: string): Promise<void> {
    expect(await ended(executionId)).toBe('committed');
  }

  /** The events appended under an idempotency key (the first event of each append made with it). */
  async function appendsUnder(key: string): Promise<{ stream_id: string; type: string }[]> {
    return (await db.query(`select stream_id, type from events where metadata->>'idempotencyKey' = $1`, [key])).rows as { stream_id: string; type: string }[];
  }

  async function eventTypes(streamId: string): Promise<string[]> {
    return (await db.query(`select type from events where stream_id = $1 order by stream_version`, [streamId])).rows.map((r: { type: string }) => r.type);
  }

  /** Branch sessions whose log does not start with `session.branched@1` then `session.created@1` (a half-applied branch): none may exist. */
  async function halfBranches(): Promise<string[]> {
    const { rows } = await db.query(`
      select b.stream_id from events b
      where b.type = 'session.branched@1'
        and (b.stream_version <> 1 or not exists (select 1 from events c where c.stream_id = b.stream_id and c.stream_version = 2 and c.type = 'session.created@1'))`);
    return rows.map((r: { stream_id: string }) => r.stream_id);
  }

  /** The sessions' inline rows equal those a rebuild from the log writes (the rebuild replaces them in place). */
  async function expectRowsEqualRebuild(sessionIds: readonly string[]): Promise<void> {
    const live = await inlineRows(open.db, sessionIds);
    expect(live.turn_messages.length).toBeGreaterThan(0);
    const rebuilt = await rebuildInline({ db: open.db, projections: engineInlineProjections });
    expect(rebuilt.failures).toEqual([]);
    expect(await inlineRows(open.db, sessionIds)).toEqual(live);
  }

  const revertRequest = (sessionId: string, turnId: string, key: string): KeyedRequest => ({
    key,
    method: 'POST',
    path: `/v1/sessions/${sessionId}/turns/${turnId}/revert`,
    body: {},
  });
  const branchRequest = (sessionId: string, atTurnId: string, key: string): KeyedRequest => ({
    key,
    method: 'POST',
    path: `/v1/sessions/${sessionId}/branch`,
    body: { atTurnId },
  });
  const inputRequest = (sessionId: string, text: string, key: string): KeyedRequest => ({
    key,
    method: 'POST',
    path: `/v1/sessions/${sessionId}/inputs`,
    body: { text },
  });

  it('API and worker killed with their appends half-way (rows written, no commit): nothing of the API’s transactions stays, the worker’s one-statement commit stands once; the repeats do each once', async () => {
    const { client } = stack;
    const parent = (await client.createSession()).id;
    const played = [];
    for (const text of ['Open the gate', 'Cross the yard', 'Climb the tower']) {
      played.push(await client.submit(parent, text));
      await committed(played[played.length - 1].executionId);
    }
    const [t1, t2, t3] = played.map((p) => p.turnId);
    const other = (await client.createSession()).id;
    expect(await halfBranches()).toEqual([]);

    // Every append below stops half-way: its events are inserted, then its first write to
    // turn_messages waits for this lock (reads go on). Nothing there is committed when the kill lands.
    const lock = new Client({ connectionString: stack.adminUrl });
    await lock.connect();
    await lock.query('begin');
    await lock.query('lock table turn_messages in exclusive mode');
    let locked = true;
    try {
      // another session's turn runs on a worker; its commit is held the same way
      const turn = await client.submit(other, 'Wait by the well');
      const revert = send(revertRequest(parent, t3, 'held-revert'));
      const branch = send(branchRequest(parent, t2, 'held-branch'));
      const held = await waitForHeldWrites(db, 3);
      expect(held.map((h) => heldWrite(h.query)).sort()).toEqual([
        'append with its turn_messages rows', // the turn's commit: its events, rows and watermark in one statement
        'delete from turn_messages', // the revert folds the parent's rows again
        'delete from turn_messages', // the branch folds its rows (the parent's read in front)
      ]);
      const victim = await crash.workerRunning(turn.executionId, 'llm.calling@1');
      await Promise.all([crash.killApi(), crash.kill(victim)]);
      // the client got no answer to either request
      expect(await revert).toBeNull();
      expect(await branch).toBeNull();

      await lock.query('rollback');
      locked = false;
      // the held transactions end without a commit: their connections are gone; the turn's commit was
      // one statement (sent whole, like a COMMIT): PostgreSQL finishes it after its worker's death
      await waitUntil(
        async () => (await db.query('select 1 from pg_stat_activity where pid = any($1)', [held.map((h) => h.pid)])).rowCount === 0,
        'the killed processes’ connections to end',
      );
      expect(await appendsUnder('held-revert')).toEqual([]);
      expect(await appendsUnder('held-branch')).toEqual([]);
      expect((await db.query(`select 1 from events where type = 'session.branched@1' and data->>'parentSessionId' = $1`, [parent])).rowCount).toBe(0);
      expect((await db.query(`select 1 from events where type = 'turn.committed@1' and data->>'executionId' = $1`, [turn.executionId])).rowCount).toBe(1);
      expect((await db.query('select status from executions where execution_id = $1', [turn.executionId])).rows).toEqual([{ status: 'committed' }]);
      expect(await halfBranches()).toEqual([]);
      await expectRowsEqualRebuild([parent, other]);

      await Promise.all([crash.restartApi(), crash.restartWorker(victim)]);
      // the repeats after the restart: done now, once; a repeat of a repeat answers the same
      const reverted = await answered(revertRequest(parent, t3, 'held-revert'));
      expect(reverted).toEqual({ status: 200, body: { turnId: t3, turnIds: [t3], executionIds: [played[2].executionId] }, replayed: false });
      expect(await answered(revertRequest(parent, t3, 'held-revert'))).toEqual({ ...reverted, replayed: true });
      const branched = await answered(branchRequest(parent, t2, 'held-branch'));
      expect(branched).toEqual({ status: 201, body: { sessionId: expect.any(String), parentSessionId: parent, atTurnId: t2 }, replayed: false });
      expect(await answered(branchRequest(parent, t2, 'held-branch'))).toEqual({ ...branched, replayed: true });
      const branchId = branched.body.sessionId as string;
      expect(await appendsUnder('held-revert')).toEqual([{ stream_id: parent, type: 'turn.reverted@1' }]);
      expect(await appendsUnder('held-branch')).toEqual([{ stream_id: branchId, type: 'session.branched@1' }]);
      expect((await eventTypes(branchId)).slice(0, 2)).toEqual(['session.branched@1', 'session.created@1']);

      // the held turn's job is taken over and commits nothing more: exactly once
      await committed(turn.executionId);
      expect((await db.query(`select 1 from events where type = 'turn.committed@1' and data->>'executionId' = $1`, [turn.executionId])).rowCount).toBe(1);

      // the parent's story is turns 1-2; the branch's is the same
      const story = async (id: string) => (await client.messages(id)).map((m) => [m.turnId, m.role, m.text]);
      expect([...new Set((await story(parent)).map(([turnId]) => turnId))]).toEqual([t1, t2]);
      expect(await story(branchId)).toEqual(await story(parent));
      await expectRowsEqualRebuild([parent, other, branchId]);
    } finally {
      if (locked) await lock.query('rollback').catch(() => undefined);
      await lock.end();
    }
  }, 120_000);

  it('a stream of keyed inputs, branches and reverts on 4 sessions, the API killed mid-stream and a worker mid-turn at random points: one append per key, repeats answer the first result', async () => {
    const { client } = stack;
    const sessions = await Promise.all(Array.from({ length: 4 }, async () => (await client.createSession()).id));
    const rounds = 3;
    // the random points, logged so a failure can be read against them
    const steeringInAll = sessions.length * rounds * 2;
    const killApiAt = 1 + Math.floor(Math.random() * (steeringInAll - 2));
    const killApiJitterMs = Math.floor(Math.random() * 40);
    const killWorkerIn = Math.floor(Math.random() * (sessions.length * rounds - 4));
    console.log(
      `steer crash stream: API killed ${killApiJitterMs} ms after sending branch/revert ${killApiAt} of ${steeringInAll}; a worker killed in the turn of input ${killWorkerIn + 1} (or the next one still running)`,
    );

    const log: { request: KeyedRequest; answer: Answer }[] = [];
    unanswered = 0;
    let steeringSent = 0;
    let apiKill: Promise<void> | null = null;
    let halfBranchesAtKill: string[] | null = null;
    // the inputs' executions in the order they were answered
    const inputs: string[] = [];
    const ask = async (request: KeyedRequest, status: number) => {
      const answering = answered(request);
      if (!request.key.includes('-input-') && ++steeringSent === killApiAt) {
        // killed at a random point of serving this request (others may be in flight too); the log as the kill left it is read before the restart
        apiKill = (async () => {
          await sleep(killApiJitterMs);
          await crash.killApi();
          halfBranchesAtKill = await halfBranches();
          await crash.restartApi();
        })();
      }
      const answer = await answering;
      if (answer.status !== status) throw new Error(`${request.path} (key ${request.key}): ${answer.status} ${JSON.stringify(answer.body)}`);
      log.push({ request, answer });
      return answer.body;
    };

    const played: { session: string; turnId: string; branchId: string }[] = [];
    const script = async (s: number) => {
      const session = sessions[s];
      for (let round = 0; round < rounds; round++) {
        const input = (await ask(inputRequest(session, `move ${round + 1}`, `s${s}-input-${round}`), 202)) as { executionId: string; turnId: string };
        inputs.push(input.executionId);
        await committed(input.executionId);
        const branch = (await ask(branchRequest(session, input.turnId, `s${s}-branch-${round}`), 201)) as { sessionId: string };
        await ask(revertRequest(session, input.turnId, `s${s}-revert-${round}`), 200);
        played.push({ session, turnId: input.turnId, branchId: branch.sessionId });
      }
    };
    let scriptsDone = false;
    const scripts = Promise.all(sessions.map((_, s) => script(s))).finally(() => (scriptsDone = true));
    // the worker running that input's model call is killed; when the turn has committed already, the next input's
    const workerKill = (async () => {
      for (let i = killWorkerIn; ; i++) {
        while (inputs.length <= i) {
          if (scriptsDone) throw new Error(`every turn from input ${killWorkerIn + 1} on committed before a worker could be killed in it`);
          await sleep(20);
        }
        const victim = await crash.workerRunningIfAny(inputs[i], 'llm.calling@1');
        if (victim === null) continue;
        await crash.kill(victim);
        // its turn is taken over by the other worker; this one comes back meanwhile
        return crash.restartWorker(victim);
      }
    })();
    await Promise.all([scripts, workerKill]);
    await apiKill;
    expect(halfBranchesAtKill).toEqual([]);
    const cut = new Set(log.filter((l) => l.answer.replayed).map((l) => l.request.key));
    console.log(
      `steer crash stream: ${unanswered} tries unanswered while the API was down; ${cut.size} requests answered by a replay after the restart (done before the kill)`,
    );

    // one append per key, of the request's kind, on the session it named
    for (const { request, answer } of log) {
      const appends = await appendsUnder(request.key);
      const kind = request.key.split('-')[1];
      const [type, stream] = {
        input: ['player-input.submitted@1', request.path.split('/')[3]],
        branch: ['session.branched@1', answer.body.sessionId],
        revert: ['turn.reverted@1', request.path.split('/')[3]],
      }[kind]!;
      expect({ key: request.key, appends }).toEqual({ key: request.key, appends: [{ stream_id: stream, type }] });
    }
    // every repeat answers the first result, replayed
    for (const { request, answer } of log) expect(await answered(request)).toEqual({ ...answer, replayed: true });
    expect(await halfBranches()).toEqual([]);

    // each session has its whole story reverted; each branch holds the one turn it was made at
    const turnsOf = async (id: string) => [...new Set((await client.messages(id)).map((m) => m.turnId))];
    const openings = await Promise.all(sessions.map(turnsOf));
    for (const p of played) {
      const branchTurns = await turnsOf(p.branchId);
      expect(branchTurns.slice(-1)).toEqual([p.turnId]);
      expect(branchTurns.length).toBe(openings[sessions.indexOf(p.session)].length + 1);
    }
    for (const turns of openings) expect(played.some((p) => turns.includes(p.turnId))).toBe(false);
    const executions = log.filter((l) => l.request.key.includes('-input-')).map((l) => l.answer.body.executionId as string);
    const commits = await db.query(
      `select data->>'executionId' as id, count(*)::int as n from events where type = 'turn.committed@1' and data->>'executionId' = any($1) group by 1`,
      [executions],
    );
    expect(commits.rows.map((r: { n: number }) => r.n)).toEqual(executions.map(() => 1));
    await expectRowsEqualRebuild([...sessions, ...played.map((p) => p.branchId)]);
  }, 120_000);

  const cancelRequest = (executionId: string, key: string, keepPartial = false): KeyedRequest => ({
    key,
    method: 'POST',
    path: `/v1/executions/${executionId}/cancel`,
    body: { keepPartial },
  });

  /**
   * Once every job of the execution has ended (the restarted worker and the other took over what the
   * killed one held): it ended cancelled, once, and nothing of it was recorded after the cancel (no
   * model call, no output, no commit: the attempt taken over was fenced out); the session's next
   * input commits; its rows equal a rebuild from the log. `restarted`: the killed worker starting again.
   */
  async function expectCancelledOnceThenNext(sessionId: string, executionId: string, restarted: Promise<unknown>): Promise<void> {
    await waitUntil(async () => (await crash.jobsOf(executionId)) === 0, `the jobs of execution ${executionId} to end`);
    await restarted;
    expect(await ended(executionId)).toBe('cancelled');
    const events = await new EventStore(open.db).readStream(sessionId);
    expect(endsOf(events, executionId)).toEqual({ committed: 0, cancelled: 1 });
    const cancelledAt = events.findIndex((e) => e.type === 'execution.cancelled@1');
    expect(events.slice(cancelledAt + 1).map((e) => e.type)).toEqual([]);
    const next = await stack.client.submit(sessionId, 'Look around');
    await committed(next.executionId);
    expect((await stack.client.messages(sessionId)).filter((m) => m.turnId === next.turnId).map((m) => m.text)).toEqual(['Look around', SHORT_STORY]);
    await expectRowsEqualRebuild([sessionId]);
  }

  it('cancel accepted (keepPartial), then the worker streaming the turn killed at once: cancelled once with the text kept; the restarted workers commit nothing of it; the next input commits', async () => {
    const { client } = stack;
    const sessionId = (await client.createSession()).id;
    const stream = await openEventStream(client, sessionId);
    const input = `${SLOW_MARK} ring the bell`;
    const turn = await client.submit(sessionId, input);
    const victim = await crash.workerRunning(turn.executionId, 'llm.calling@1');
    // a word of the story is out: there is text to keep
    await stream.until((e) => e.type === 'delta' && e.data.executionId === turn.executionId);
    stream.close();
    const cancel = await answered(cancelRequest(turn.executionId, 'cancel-then-kill', true));
    await crash.kill(victim);
    const restarted = crash.restartWorker(victim);
    expect(cancel).toMatchObject({
      status: 200,
      replayed: false,
      body: { executionId: turn.executionId, turnId: turn.turnId, status: 'cancelled', keepPartial: true },
    });
    const kept = (cancel.body.messages as { text: string }[]).map((m) => m.text);
    expect(kept).toEqual([input, expect.any(String)]);
    expect(kept[1] !== '' && LONG_STORY.startsWith(kept[1])).toBe(true);

    await expectCancelledOnceThenNext(sessionId, turn.executionId, restarted);
    // the kept turn is the history's, and a repeat answers the first cancel
    expect((await client.messages(sessionId)).filter((m) => m.turnId === turn.turnId).map((m) => m.text)).toEqual(kept);
    expect(await answered(cancelRequest(turn.executionId, 'cancel-then-kill', true))).toEqual({ ...cancel, replayed: true });
  }, 60_000);

  it('the worker streaming the turn killed, then the cancel: accepted while the turn’s job has no worker; the job taken over ends without a model call or a commit; the next input commits', async () => {
    const { client } = stack;
    const sessionId = (await client.createSession()).id;
    const input = `${SLOW_MARK} light the lamp`;
    const turn = await client.submit(sessionId, input);
    const victim = await crash.workerRunning(turn.executionId, 'llm.calling@1');
    await crash.kill(victim);
    const cancel = await answered(cancelRequest(turn.executionId, 'kill-then-cancel'));
    const restarted = crash.restartWorker(victim);
    expect(cancel).toMatchObject({ status: 200, body: { executionId: turn.executionId, status: 'cancelled', keepPartial: false } });
    await expectCancelledOnceThenNext(sessionId, turn.executionId, restarted);
    expect((await client.messages(sessionId)).filter((m) => m.turnId === turn.turnId)).toEqual([]);
  }, 60_000);

  it('the commit held before its one statement runs (waiting on turn_messages); the cancel takes the session first; the worker committing is killed and its statement, run after, writes nothing: the cancel wins, exactly once', async () => {
    const { client } = stack;
    const sessionId = (await client.createSession()).id;
    const lock = new Client({ connectionString: stack.adminUrl });
    await lock.connect();
    await lock.query('begin');
    await lock.query('lock table turn_messages in exclusive mode');
    let locked = true;
    try {
      const turn = await client.submit(sessionId, 'Ring the bell');
      const [commit] = await waitForHeldWrites(db, 1);
      expect(heldWrite(commit.query)).toBe('append with its turn_messages rows');
      const victim = await crash.workerRunning(turn.executionId, 'llm.calling@1');
      // the commit's statement waits for turn_messages before it runs (a table's lock is taken before
      // the statement's snapshot and its stream lock): the cancel's append takes the session's lock
      // first, and its fold (a cancel changes the story path) waits for turn_messages too
      const cancel = answered(cancelRequest(turn.executionId, 'cancel-meets-commit'));
      await waitForHeldWrites(db, 2);
      await crash.kill(victim);
      const restarted = crash.restartWorker(victim);
      await lock.query('rollback');
      locked = false;
      expect(await cancel).toMatchObject({ status: 200, body: { executionId: turn.executionId, status: 'cancelled' } });
      // the killed worker's statement ran after the cancel's lock: its append is not made (the lock
      // was taken, or the head moved on), nothing of it is written
      await waitUntil(
        async () => (await db.query('select 1 from pg_stat_activity where pid = $1', [commit.pid])).rowCount === 0,
        'the killed worker’s connection to end',
      );
      await expectCancelledOnceThenNext(sessionId, turn.executionId, restarted);
      expect((await client.messages(sessionId)).filter((m) => m.turnId === turn.turnId)).toEqual([]);
    } finally {
      if (locked) await lock.query('rollback').catch(() => undefined);
      await lock.end();
    }
  }, 60_000);
});

/**
 * The backends whose write waits for a lock on turn_messages, once there are `count` of them, with
 * the text of the statement each waits in.
 *
 * The waiters and their texts are read in separate statements, in this order: the waiters
 * (pg_locks), then their texts (pg_stat_activity), then the waiters again. One statement joining the
 * two views paired a waiter with an older text (a failure in CI): the views are read at different
 * moments, pg_stat_activity first in its plan (a hash join reads its outer side before it builds
 * from pg_locks), so a backend that began its held statement in between was seen waiting in it
 * with the text of the statement before. A backend seen waiting stays in that statement while the
 * test holds the lock (no lock or statement timeout is set; only the test's rollback or the
 * backend's death ends the wait), so a text read after it was seen waiting is the held statement's;
 * the second read of the waiters checks that the wait went on over the read of the texts.
 */
async function waitForHeldWrites(db: Client, count: number): Promise<{ pid: number; query: string }[]> {
  const waiting = async () =>
    new Set((await db.query(`select pid from pg_locks where relation = 'turn_messages'::regclass and not granted`)).rows.map((r: { pid: number }) => r.pid));
  let held: { pid: number; query: string }[] = [];
  await waitUntil(async () => {
    const before = await waiting();
    if (before.size < count) return false;
    held = (await db.query('select pid, query from pg_stat_activity where pid = any($1::int[])', [[...before]])).rows as { pid: number; query: string }[];
    const after = await waiting();
    return held.length === before.size && [...before].every((pid) => after.has(pid));
  }, `${count} writes waiting on turn_messages`);
  return held;
}

/** What a held statement writes: a delete from, or an insert into, turn_messages (the commit's insert sits in a CTE beside its watermark). */
function heldWrite(query: string): string {
  const text = query.replace(/\s+/g, ' ').replaceAll('"', '').trim();
  if (text.startsWith('delete from turn_messages')) return 'delete from turn_messages';
  if (/\binsert into turn_messages\b/.test(text)) return 'insert into turn_messages';
  // a one-statement append (its inline writes are CTEs of the statement; the text shown is cut at 1 KiB)
  if (text.startsWith('with l as materialized')) return 'append with its turn_messages rows';
  return text.slice(0, 60);
}

/** Polls until `check` holds (a hang guard of 30 s). */
async function waitUntil(check: () => Promise<boolean>, what: string): Promise<void> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(20)) if (await check()) return;
  throw new Error(`timed out waiting for ${what}`);
}
