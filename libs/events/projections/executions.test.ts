import { projectionSpec, uniqueIds } from '../../../test/support/projection-spec';
import type { NewEvent } from '../event-types';
import { executionsProjection } from './executions';
import { EventStore } from '../event-store';
import { QueryCounter } from '../../../test/support/query-counter';

const spec = projectionSpec({ inline: executionsProjection });
beforeAll(() => spec.start(), 120_000);
afterAll(() => spec.stop());

const ev = {
  submitted: (executionId: string, turnId: string, text = 'go north'): NewEvent => ({
    type: 'player-input.submitted@1',
    data: { executionId, turnId, messageId: `${executionId}-m`, text },
  }),
  started: (executionId: string, turnId: string, attempt: number, workerId: string): NewEvent => ({
    type: 'execution.started@1',
    data: { executionId, turnId, attempt, workerId },
  }),
  calling: (executionId: string, turnId: string): NewEvent => ({
    type: 'llm.calling@1',
    data: { executionId, turnId, attempt: 1, callId: `${executionId}-c`, pluginId: 'p', runtimeId: 'r', provider: 'openai', model: 'm', body: '{}' },
  }),
  committed: (executionId: string, turnId: string): NewEvent => ({
    type: 'turn.committed@1',
    data: {
      executionId,
      turnId,
      attempt: 1,
      messages: [{ messageId: `${executionId}-m`, role: 'user', sourceType: 'player', pluginId: null, runtimeId: null, outputKind: null, text: 'go north' }],
    },
  }),
  suspended: (executionId: string, turnId: string): NewEvent => ({
    type: 'execution.suspended@1',
    data: {
      executionId,
      turnId,
      attempt: 1,
      pluginId: 'p',
      runtimeId: 'r',
      step: 1,
      toolCallId: 'call-1',
      name: 'ask',
      currentTurnUserMessages: [{ role: 'user', content: 'go north' }],
      inputs: [],
      waitingFor: { kind: 'approval', prompt: 'Open the vault?' },
    },
  }),
  resumed: (executionId: string, turnId: string): NewEvent => ({
    type: 'execution.resumed@1',
    data: { executionId, turnId, resumeId: `${executionId}-r`, pluginId: 'p', runtimeId: 'r', step: 1, toolCallId: 'call-1', payload: { approved: true } },
  }),
  failed: (executionId: string, turnId: string, code: string, message: string): NewEvent => ({
    type: 'execution.failed@1',
    data: { executionId, turnId, attempt: 1, error: { code, message } },
  }),
};

const row = (fields: Record<string, unknown>) => ({
  attempts: 0,
  worker_id: null,
  waiting_for: null,
  error_code: null,
  error_message: null,
  status: 'queued',
  ...fields,
});

describe('executions (inline projection)', () => {
  it('given a session, when an input is submitted, then its execution is queued at the version it was submitted at', async () => {
    const id = uniqueIds();
    await spec.check({
      given: [{ tenant: id('t'), stream: id('s'), events: [{ type: 'session.created@1', data: { sessionId: id('s'), worldId: null, locale: 'en' } }] }],
      when: [{ tenant: id('t'), stream: id('s'), events: [ev.submitted(id('e'), id('u'))] }],
      then: ({ at }) => ({
        executions: [
          row({
            execution_id: id('e'),
            tenant_id: id('t'),
            session_id: id('s'),
            turn_id: id('u'),
            submitted_version: 2,
            submitted_at: at(1),
            updated_at: at(1),
          }),
        ],
      }),
    });
  });

  it('started, progress, committed: running with its attempt and worker, then committed at the commit time', async () => {
    const id = uniqueIds();
    const [t, s, e, u] = [id('t'), id('s'), id('e'), id('u')];
    await spec.check({
      given: [{ tenant: t, stream: s, events: [ev.submitted(e, u)] }],
      when: [
        { tenant: t, stream: s, events: [ev.started(e, u, 1, 'worker-a')] },
        { tenant: t, stream: s, events: [ev.calling(e, u)] },
        { tenant: t, stream: s, events: [ev.committed(e, u)] },
      ],
      then: ({ at }) => ({
        executions: [
          row({
            execution_id: e,
            tenant_id: t,
            session_id: s,
            turn_id: u,
            status: 'committed',
            attempts: 1,
            worker_id: 'worker-a',
            submitted_version: 1,
            submitted_at: at(0),
            updated_at: at(3),
          }),
        ],
      }),
    });
  });

  it('a progress mark appended with its commit is one update, the commit’s; the rows are the same', async () => {
    const id = uniqueIds();
    const [t, s, e, u] = [id('t'), id('s'), id('e'), id('u')];
    await spec.append({ tenant: t, stream: s, events: [ev.submitted(e, u)] }, { tenant: t, stream: s, events: [ev.started(e, u, 1, 'worker-a')] });
    const counter = new QueryCounter();
    const store = new EventStore(spec.db.withPlugin(counter), { inline: [executionsProjection] });
    const { events } = await store.append({ tenantId: t, streamId: s, expectedVersion: 2, events: [ev.calling(e, u), ev.committed(e, u)] });
    // the append with the commit's update in it (the mark's would write the same updated_at; two
    // updates of one row cannot be one statement: without the mark left out, a transaction of three)
    expect(counter.queries).toBe(1);
    expect((await spec.rows([s], ['executions'])).executions).toEqual([
      row({
        execution_id: e,
        tenant_id: t,
        session_id: s,
        turn_id: u,
        status: 'committed',
        attempts: 1,
        worker_id: 'worker-a',
        submitted_version: 1,
        submitted_at: expect.any(Date),
        updated_at: new Date(events[1].recordedAt),
      }),
    ]);
    // alone, or before an event of another execution, a mark is applied (another row: the same one statement)
    counter.queries = 0;
    await store.append({ tenantId: t, streamId: s, expectedVersion: 4, events: [ev.calling(e, u), ev.submitted(id('e2'), id('u2'))] });
    expect(counter.queries).toBe(1);
  });

  it('a progress mark appended after its execution’s start (or another update of the same time) is left out; the rows are those of every event applied', async () => {
    const id = uniqueIds();
    const [t, s, e, u] = [id('t'), id('s'), id('e'), id('u')];
    await spec.append({ tenant: t, stream: s, events: [ev.submitted(e, u)] });
    const counter = new QueryCounter();
    const store = new EventStore(spec.db.withPlugin(counter), { inline: [executionsProjection] });
    /** Appends `events`, returns the statements it took; the rows must be those of every event applied in order, none left out. */
    const append = async (events: NewEvent[]): Promise<number> => {
      counter.queries = 0;
      await store.append({ tenantId: t, streamId: s, expectedVersion: await spec.store.streamVersion(s), events });
      const queries = counter.queries;
      const inline = await spec.rows([s], ['executions']);
      await spec.db.deleteFrom('executions').where('session_id', '=', s).execute();
      await spec.reapply(await spec.store.readStream(s));
      expect(await spec.rows([s], ['executions'])).toEqual(inline);
      return queries;
    };
    // a stage's first call rides with its start: the append with the start's update in it (before: and the mark's, in a transaction)
    expect(await append([ev.started(e, u, 1, 'worker-a'), ev.calling(e, u)])).toBe(1);
    const [row1] = (await spec.rows([s], ['executions'])).executions;
    const started = (await spec.store.readStream(s)).at(-1)!;
    expect(row1).toMatchObject({ status: 'running', attempts: 1, worker_id: 'worker-a', updated_at: new Date(started.recordedAt) });
    // after a resume: both marks left out (the first is covered by the second, the second by the resume)
    expect(await append([ev.suspended(e, u)])).toBe(1);
    expect(await append([ev.resumed(e, u), ev.calling(e, u), ev.calling(e, u)])).toBe(1);
    // two marks alone: the second is applied (it covers the first), the row moves to their time
    expect(await append([ev.calling(e, u), ev.calling(e, u)])).toBe(1);
    const marks = (await spec.store.readStream(s)).at(-1)!;
    expect((await spec.rows([s], ['executions'])).executions[0]).toMatchObject({ status: 'running', updated_at: new Date(marks.recordedAt) });
    // after an event of another execution, or its own input only (an insert writes no time on a row it finds): applied
    // (an execution's row inserted and updated, or written twice, in one append: its transaction, one statement each)
    const [e2, u2] = [id('e2'), id('u2')];
    expect(await append([ev.submitted(e2, u2), ev.started(e2, u2, 1, 'w'), ev.calling(e, u)])).toBe(4);
    expect(await append([ev.submitted(e, u), ev.calling(e, u)])).toBe(3);
    // after its commit (nothing left running): left out
    expect(await append([ev.committed(e, u), ev.calling(e, u)])).toBe(1);
    const statuses = (await spec.rows([s], ['executions'])).executions.map((r) => [r.execution_id, r.status]);
    expect(statuses).toEqual(
      expect.arrayContaining([
        [e, 'committed'],
        [e2, 'running'],
      ]),
    );
  });

  it('progress of an execution that is not running does not touch it; a failure after the commit changes nothing', async () => {
    const id = uniqueIds();
    const [t, s, e, u] = [id('t'), id('s'), id('e'), id('u')];
    await spec.check({
      given: [{ tenant: t, stream: s, events: [ev.submitted(e, u)] }],
      when: [
        { tenant: t, stream: s, events: [ev.calling(e, u)] }, // still queued: no progress
        { tenant: t, stream: s, events: [ev.started(e, u, 1, 'w'), ev.committed(e, u)] },
        { tenant: t, stream: s, events: [ev.failed(e, u, 'LATE', 'too late')] },
      ],
      then: ({ at }) => ({
        executions: [
          row({
            execution_id: e,
            tenant_id: t,
            session_id: s,
            turn_id: u,
            status: 'committed',
            attempts: 1,
            worker_id: 'w',
            submitted_version: 1,
            submitted_at: at(0),
            updated_at: at(3),
          }),
        ],
      }),
    });
  });

  it('a suspension shows what the execution waits for (still running for the session) until its resume clears it', async () => {
    const id = uniqueIds();
    const [t, s, e, u] = [id('t'), id('s'), id('e'), id('u')];
    const base = { execution_id: e, tenant_id: t, session_id: s, turn_id: u, status: 'running', attempts: 1, worker_id: 'w', submitted_version: 1 };
    await spec.check({
      given: [{ tenant: t, stream: s, events: [ev.submitted(e, u), ev.started(e, u, 1, 'w')] }],
      when: [{ tenant: t, stream: s, events: [ev.suspended(e, u)] }],
      then: ({ at }) => ({
        executions: [row({ ...base, waiting_for: JSON.stringify({ kind: 'approval', prompt: 'Open the vault?' }), submitted_at: at(0), updated_at: at(2) })],
      }),
    });
    const [s2, e2, u2] = [id('s2'), id('e2'), id('u2')];
    await spec.check({
      given: [{ tenant: t, stream: s2, events: [ev.submitted(e2, u2), ev.started(e2, u2, 1, 'w'), ev.suspended(e2, u2)] }],
      when: [{ tenant: t, stream: s2, events: [ev.resumed(e2, u2)] }],
      then: ({ at }) => ({
        executions: [row({ ...base, execution_id: e2, session_id: s2, turn_id: u2, submitted_at: at(0), updated_at: at(3) })],
      }),
    });
  });

  it('a failure is recorded with its code and message, Unicode unchanged (emoji, ZWJ, CJK, RTL)', async () => {
    const id = uniqueIds();
    const [t, s, e, u] = [id('t'), id('s'), id('e'), id('u')];
    const message = 'фейл 😀 👩‍👩‍👧‍👦 超时了 انتهت المهلة שגיאה e\u0301';
    await spec.check({
      given: [{ tenant: t, stream: s, events: [ev.submitted(e, u), ev.started(e, u, 1, 'w')] }],
      when: [{ tenant: t, stream: s, events: [ev.failed(e, u, 'PROVIDER_TIMEOUT', message)] }],
      then: ({ at }) => ({
        executions: [
          row({
            execution_id: e,
            tenant_id: t,
            session_id: s,
            turn_id: u,
            status: 'failed',
            attempts: 1,
            worker_id: 'w',
            submitted_version: 1,
            error_code: 'PROVIDER_TIMEOUT',
            error_message: message,
            submitted_at: at(0),
            updated_at: at(2),
          }),
        ],
      }),
    });
  });

  it('rows carry their tenant; another tenant reads none of them', async () => {
    const id = uniqueIds();
    const { rows } = await spec.check({
      when: [
        { tenant: id('t1'), stream: id('s1'), events: [ev.submitted(id('e1'), id('u1'))] },
        { tenant: id('t2'), stream: id('s2'), events: [ev.submitted(id('e2'), id('u2'))] },
      ],
      then: ({ at }) => ({
        executions: [
          row({
            execution_id: id('e1'),
            tenant_id: id('t1'),
            session_id: id('s1'),
            turn_id: id('u1'),
            submitted_version: 1,
            submitted_at: at(0),
            updated_at: at(0),
          }),
          row({
            execution_id: id('e2'),
            tenant_id: id('t2'),
            session_id: id('s2'),
            turn_id: id('u2'),
            submitted_version: 1,
            submitted_at: at(1),
            updated_at: at(1),
          }),
        ],
      }),
    });
    expect(rows.executions).toHaveLength(2);
    expect(await spec.readModels.execution(id('t1'), id('e1'))).toMatchObject({ executionId: id('e1'), status: 'queued' });
    expect(await spec.readModels.execution(id('t2'), id('e1'))).toBeNull();
    expect(await spec.readModels.execution(id('t1'), id('e2'))).toBeNull();
  });

  it('applying the same events again gives the same rows (a replay or a repeat is harmless)', async () => {
    const id = uniqueIds();
    const [t, s, e, u] = [id('t'), id('s'), id('e'), id('u')];
    const { log, rows } = await spec.check({
      when: [{ tenant: t, stream: s, events: [ev.submitted(e, u), ev.started(e, u, 1, 'w'), ev.calling(e, u), ev.committed(e, u)] }],
      then: { executions: [expect.objectContaining({ execution_id: e, status: 'committed' })] },
    });
    await spec.reapply(log.events);
    expect(await spec.rows([s])).toEqual(rows);
  });
});
