import { randomUUID } from 'node:crypto';
import {
  defaultProjections,
  EventStore,
  eventSchemas,
  type EventType,
  executionsProjection,
  migrateToLatest,
  openDatabase,
  type OpenDatabase,
  type Projection,
  ProjectionRunner,
  turnMessagesProjection,
} from '..';

/**
 * A reader that sees an execution `committed` must find its messages: no projection may get past an
 * event a projection applied before it in the catch-up has not read, even when the event is appended
 * while the catch-up runs.
 */
describe('projections applied in one catch-up stop at one head (PGlite)', () => {
  let open: OpenDatabase;
  let store: EventStore;
  beforeEach(async () => {
    open = await openDatabase({ kind: 'pglite' });
    await migrateToLatest(open.db);
    store = new EventStore(open.db);
  });
  afterEach(() => open.close());

  it('executions comes after the views a turn reads', () => {
    const names = defaultProjections.map((p) => p.name);
    expect(names.indexOf('executions')).toBeGreaterThan(names.indexOf('turn_messages'));
    expect(names.indexOf('executions')).toBeGreaterThan(names.indexOf('summaries'));
  });

  it('a commit appended after turn_messages read its batch is not shown as committed before its messages exist', async () => {
    const tenantId = 't1';
    const sessionId = randomUUID();
    const executionId = randomUUID();
    const turnId = randomUUID();
    const messageId = randomUUID();
    await store.append({
      tenantId,
      streamId: sessionId,
      expectedVersion: 0,
      events: [
        { type: 'session.created@1', data: { sessionId, worldId: null, locale: 'en' } },
        { type: 'player-input.submitted@1', data: { executionId, turnId, messageId, text: 'light the lantern' } },
        { type: 'execution.started@1', data: { executionId, turnId, attempt: 1, workerId: 'w' } },
      ],
    });
    // turn_messages, but while it applies the batch the worker's commit lands (same transaction, so it
    // is visible to every later read of this catch-up, and after turn_messages read its batch)
    let committedDuringCatchUp = false;
    const racingTurnMessages: Projection = {
      ...turnMessagesProjection,
      // every type, so it runs on the batch's first event
      handles: Object.keys(eventSchemas) as EventType[],
      async applyBatch(trx, events) {
        await turnMessagesProjection.applyBatch(trx, events);
        if (committedDuringCatchUp) return;
        committedDuringCatchUp = true;
        await trx
          .insertInto('events')
          .values({
            tenant_id: tenantId,
            stream_id: sessionId,
            stream_version: 4,
            type: 'turn.committed@1',
            data: JSON.stringify({
              executionId,
              turnId,
              attempt: 1,
              messages: [
                { messageId, role: 'user', sourceType: 'player', pluginId: null, runtimeId: null, outputKind: null, text: 'light the lantern' },
                {
                  messageId: randomUUID(),
                  role: 'assistant',
                  sourceType: 'runtime',
                  pluginId: 'narrator',
                  runtimeId: 'narrator',
                  outputKind: 'story',
                  text: 'It glows.',
                },
              ],
            }),
            metadata: '{}',
          })
          .execute();
      },
    };
    const runner = new ProjectionRunner(open.db, { projections: [racingTurnMessages, executionsProjection] });
    await runner.catchUp();
    expect(committedDuringCatchUp).toBe(true);

    const status = async () =>
      (await open.db.selectFrom('executions').select('status').where('execution_id', '=', executionId).executeTakeFirstOrThrow()).status;
    const messages = async () => (await open.db.selectFrom('turn_messages').select('message_id').where('session_id', '=', sessionId).execute()).length;
    expect(await status()).toBe('running');
    expect(await messages()).toBe(0);

    // the next catch-up brings both to the commit
    await runner.catchUp();
    expect(await messages()).toBe(2);
    expect(await status()).toBe('committed');
  });
});
