import { sql } from 'kysely';
import {
  defaultProjections,
  EventStore,
  migrateToLatest,
  type NewEvent,
  openDatabase,
  type OpenDatabase,
  type Projection,
  ProjectionRunner,
  turnMessagesProjection,
} from '..';

/**
 * One projection that cannot apply one session's event stops for that session only: the other
 * projections and the other sessions go on, the failure is visible, and the held-back events are
 * applied in order once the fault is gone.
 */
describe('a projection that cannot apply an event (PGlite)', () => {
  let open: OpenDatabase;
  let store: EventStore;
  beforeEach(async () => {
    open = await openDatabase({ kind: 'pglite' });
    await migrateToLatest(open.db);
    store = new EventStore(open.db);
    n = 0;
  });
  afterEach(() => open.close());

  /** turn_messages, but it writes its rows and then hits a real PostgreSQL error on a committed text holding "BOOM". */
  const faults = { on: true, word: 'BOOM' };
  const fragileTurnMessages: Projection = {
    ...turnMessagesProjection,
    async applyBatch(trx, events) {
      await turnMessagesProjection.applyBatch(trx, events);
      if (faults.on && events.some((event) => event.type === 'turn.committed@1' && event.data.messages.some((m) => m.text.includes(faults.word)))) {
        await sql`select '{"snippet":"\\ud83d"}'::jsonb`.execute(trx); // 22P02, like a lone surrogate in a snippet
      }
    },
  };
  const projections = defaultProjections.map((p) => (p.name === 'turn_messages' ? fragileTurnMessages : p));

  const logs: { level: string; line: string }[] = [];
  const logger = { log: (line: string) => logs.push({ level: 'log', line }), warn: (line: string) => logs.push({ level: 'warn', line }) };
  const runner = (options: { retryDelayMs?: number } = {}) => new ProjectionRunner(open.db, { projections, logger, retryDelayMs: 3_600_000, ...options });

  let n = 0;
  async function append(session: string, ...events: NewEvent[]): Promise<number> {
    const version = await store.streamVersion(session);
    if (version === 0) events.unshift({ type: 'session.created@1', data: { sessionId: session, worldId: null, locale: 'en' } });
    return (await store.append({ tenantId: `tenant-${session}`, streamId: session, expectedVersion: version, events })).lastPosition;
  }
  function turn(text: string): NewEvent[] {
    const e = `e${++n}`;
    return [
      { type: 'player-input.submitted@1', data: { executionId: e, turnId: `t${n}`, messageId: `u${n}`, text } },
      { type: 'execution.started@1', data: { executionId: e, turnId: `t${n}`, attempt: 1, workerId: 'w' } },
      {
        type: 'turn.committed@1',
        data: {
          executionId: e,
          turnId: `t${n}`,
          attempt: 1,
          messages: [
            { messageId: `u${n}`, role: 'user', sourceType: 'player', pluginId: null, runtimeId: null, outputKind: null, text },
            {
              messageId: `a${n}`,
              role: 'assistant',
              sourceType: 'runtime',
              pluginId: 'narrator',
              runtimeId: 'narrator',
              outputKind: 'story',
              text: `story ${n}`,
            },
          ],
        },
      },
    ];
  }
  const messages = async (session: string) =>
    (await open.db.selectFrom('turn_messages').select(['ord', 'text']).where('session_id', '=', session).orderBy('ord').execute()).map(
      (r) => `${r.ord}:${r.text}`,
    );
  const executions = async (session: string) =>
    (await open.db.selectFrom('executions').select('status').where('session_id', '=', session).orderBy('submitted_version').execute()).map((r) => r.status);

  it('stops alone, is reported with its position, and applies the held-back events in order once fixed', async () => {
    faults.on = true;
    logs.length = 0;
    await append('B', ...turn('b one'));
    const badAt = await append('A', ...turn('a BOOM'));
    await append('C', ...turn('c one'));
    await append('A', ...turn('a two')); // fine in itself, but after the stopped event: held back
    await append('B', ...turn('b two'));

    const first = runner();
    await expect(first.catchUp()).resolves.toBeGreaterThan(0);

    // other sessions and other projections: applied
    expect(await messages('B')).toEqual(['1:b one', '2:story 1', '3:b two', '4:story 5']);
    expect(await messages('C')).toEqual(['1:c one', '2:story 3']);
    expect(await executions('A')).toEqual(['committed', 'committed']);
    // the failing session in the failing projection: nothing half-written, later events held back
    expect(await messages('A')).toEqual([]);

    const status = await first.status();
    const head = await store.headPosition();
    expect(status.map((s) => [s.name, s.state, s.position, s.lag])).toEqual([
      ['turn_messages', 'failing', head, 0],
      ['summaries', 'running', head, 0],
      ['executions', 'running', head, 0],
    ]);
    const tm = status.find((s) => s.name === 'turn_messages')!;
    expect(tm.failing).toBe(1);
    expect(tm.failures).toEqual([
      expect.objectContaining({ streamId: 'A', tenantId: 'tenant-A', globalPosition: badAt, eventType: 'turn.committed@1', attempts: 1 }),
    ]);
    expect(tm.failures[0].error).toMatch(/invalid input syntax for type json.*22P02/);
    expect(await first.stoppedAt('A')).toEqual([expect.objectContaining({ projection: 'turn_messages', globalPosition: badAt })]);
    expect(await first.stoppedAt('B')).toEqual([]);
    // one log line, with projection, position, stream and error
    const warnings = logs.filter((l) => l.level === 'warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0].line).not.toContain('\n');
    expect(warnings[0].line).toMatch(
      new RegExp(`projection turn_messages stopped at global position ${badAt} .* of stream A .*invalid input syntax for type json`),
    );

    // later events: other sessions go on, the stopped one stays held back (its retry is not due)
    await append('C', ...turn('c two'));
    await append('A', ...turn('a three'));
    await first.catchUp();
    expect(await messages('C')).toEqual(['1:c one', '2:story 3', '3:c two', '4:story 6']);
    expect(await messages('A')).toEqual([]);

    // the fault removed, a restart: the first catch-up retries at once and applies A's events in order
    faults.on = false;
    const restarted = runner();
    await restarted.catchUp();
    expect(await messages('A')).toEqual(['1:a BOOM', '2:story 2', '3:a two', '4:story 4', '5:a three', '6:story 7']);
    expect((await restarted.status()).every((s) => s.state === 'running' && s.failures.length === 0 && s.lag === 0)).toBe(true);
    expect(logs.at(-1)).toEqual({ level: 'log', line: expect.stringMatching(/projection turn_messages caught up on stream A .*: 7 held-back event\(s\)/) });

    // and the rows are the ones a replay from the log builds
    const dump = async () => (await sql`select * from turn_messages order by session_id, ord`.execute(open.db)).rows;
    const live = await dump();
    await restarted.replay();
    expect(await dump()).toEqual(live);
  });

  it('retries with backoff; a retry that gets further keeps what it applied and moves the failure on', async () => {
    faults.on = true;
    faults.word = 'BOOM';
    logs.length = 0;
    await append('A', ...turn('a BOOM'));
    const secondBad = await append('A', ...turn('a CRASH'));
    await append('A', ...turn('a fine'));
    const r = runner({ retryDelayMs: 0 }); // every retry is due at once
    const attempts = async () => (await r.status()).find((s) => s.name === 'turn_messages')!.failures[0].attempts;
    await r.catchUp();
    const before = await attempts();
    await r.catchUp();
    expect(await attempts()).toBe(before + 1);
    let [failure] = (await r.status()).find((s) => s.name === 'turn_messages')!.failures;
    expect(await messages('A')).toEqual([]);

    faults.word = 'CRASH'; // the first fault is fixed, a second one is not
    await r.catchUp();
    [failure] = (await r.status()).find((s) => s.name === 'turn_messages')!.failures;
    expect(failure.globalPosition).toBe(secondBad);
    expect(await messages('A')).toEqual(['1:a BOOM', '2:story 1']);

    faults.on = false;
    await r.retryNow();
    expect(await messages('A')).toEqual(['1:a BOOM', '2:story 1', '3:a CRASH', '4:story 2', '5:a fine', '6:story 3']);
    expect((await r.status()).find((s) => s.name === 'turn_messages')!.state).toBe('running');
  });

  it('an event no schema reads any more stops the projections that handle its type, for its stream only', async () => {
    faults.on = false;
    logs.length = 0;
    await append('A', ...turn('a one'));
    await append('B', ...turn('b one'));
    // a row written by a newer version, or by hand: the log is append-only, so it stays
    const { rows } = await sql<{ global_position: string }>`
      insert into events (tenant_id, stream_id, stream_version, type, data, metadata)
      values ('tenant-A', 'A', 5, 'history.compacted@1', '{"nonsense": true}', '{}') returning global_position`.execute(open.db);
    await append('B', ...turn('b two'));
    const r = runner();
    await r.catchUp();
    expect(await messages('B')).toHaveLength(4);
    expect(await messages('A')).toHaveLength(2);
    const status = await r.status();
    // history.compacted@1 is read by turn_messages and summaries; the others never decode it
    const handling = status.filter((s) => ['turn_messages', 'summaries'].includes(s.name));
    expect(handling.every((s) => s.state === 'failing' && s.failures[0].globalPosition === Number(rows[0].global_position))).toBe(true);
    expect(status.filter((s) => !handling.includes(s)).every((s) => s.state === 'running')).toBe(true);
    expect(handling[0].failures[0].error).toMatch(/ZodError/);
    // a replay (one transaction) rebuilds the rest and records the failures again
    const live = await messages('B');
    await r.replay();
    expect(await messages('B')).toEqual(live);
    expect(await messages('A')).toHaveLength(2);
    expect((await r.status()).map((s) => [s.state, s.failing, s.failures[0]?.attempts])).toEqual(
      status.map((s) => (handling.includes(s) ? ['failing', 1, 1] : ['running', 0, undefined])),
    );
  });

  it('a catch-up retries at most 10 stopped streams per projection (catch-ups run inside turns)', async () => {
    faults.on = true;
    faults.word = 'BOOM';
    const sessions = Array.from({ length: 12 }, (_, i) => `S${i}`);
    for (const s of sessions) await append(s, ...turn(`${s} BOOM`));
    await runner().catchUp();
    expect((await runner().status()).find((p) => p.name === 'turn_messages')!.failing).toBe(12);
    faults.on = false;
    const restarted = runner();
    await restarted.catchUp();
    expect((await restarted.status()).find((p) => p.name === 'turn_messages')!.failing).toBe(2);
    await restarted.catchUp(); // due at once: a process's first catch-up made them all due
    expect((await restarted.status()).find((p) => p.name === 'turn_messages')!.failing).toBe(0);
    for (const s of sessions) expect(await messages(s)).toHaveLength(2);
  });
});
