import { SessionJournal } from '../../journal/journal';
import { pluginDataAt } from '../journal-plugin-data';
import { type TurnHarness, turnHarness } from '../../turn/test/harness';

/**
 * The session snapshots `pluginDataAt` keeps are keyed by the journal's `pluginDataVersion`; a
 * snapshot at a version above 0 serves every journal of the store at that version. An event that
 * changes which events count (a failure, a cancel: `changesPath`) folds the session's plugin data
 * again without a plugin-data event: the failed turn's writes leave the store. A journal that holds
 * that event must not be answered with a snapshot taken before it (the next execution would read a
 * discarded turn's data, which neither the store nor the audit's fold holds any more).
 */
describe('pluginDataAt after a failure that discards a turn’s plugin data (PGlite)', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await turnHarness();
  });
  afterAll(() => h.close());

  it('the next execution’s journal (holding the write and the failure) reads what the store holds, not the snapshot before the failure', async () => {
    const session = await h.session();
    const { store } = h.deps;
    const a = await h.input(session, 'First'); // v2
    await store.append({
      ...session,
      streamId: session.sessionId,
      expectedVersion: 2,
      events: [{ type: 'execution.started@1', data: { executionId: a.executionId, turnId: a.turnId, attempt: 1, workerId: 'w' } }],
    });
    const b = await h.input(session, 'Second, queued while the first runs'); // v4
    await store.append({
      ...session,
      streamId: session.sessionId,
      expectedVersion: 4,
      events: [
        {
          type: 'plugin-data.written@1',
          data: { executionId: a.executionId, turnId: a.turnId, attempt: 1, pluginId: 'affinity', namespace: 'scores', key: 'Ōkami 狼', value: { score: 3 } },
        },
      ],
    });
    const scope = { ...session, pluginId: 'affinity' };
    // a run of the first execution reads the data it wrote (the snapshot at its journal's version is kept)
    const first = new SessionJournal(await store.readStream(session.sessionId), 0);
    expect(await pluginDataAt(h.deps.pluginData, first).scope(scope).get('scores', 'Ōkami 狼')).toEqual({ score: 3 });
    // the first execution fails: its plugin data leaves the store (the projection folds the story again)
    await store.append({
      ...session,
      streamId: session.sessionId,
      expectedVersion: 5,
      events: [
        {
          type: 'execution.failed@1',
          data: { executionId: a.executionId, turnId: a.turnId, attempt: 1, error: { code: 'X', message: 'failed' }, discarded: true },
        },
      ],
    });
    expect(await h.deps.pluginData.scope(scope).get('scores', 'Ōkami 狼')).toBeUndefined();
    // the second execution's journal starts at its input: it holds the write and the failure
    const { after, events } = await store.readPendingSuffix(session.tenantId, session.sessionId);
    const second = new SessionJournal(events, after);
    expect(second.get(b.executionId)?.status).toBe('pending');
    expect(await pluginDataAt(h.deps.pluginData, second).scope(scope).get('scores', 'Ōkami 狼')).toBeUndefined();
    expect(await pluginDataAt(h.deps.pluginData, second).scope(scope).selfData('scores')).toMatchObject({ totalRows: 0 });
  });
});
