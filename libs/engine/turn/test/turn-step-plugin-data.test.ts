import { randomUUID } from 'node:crypto';
import { turnContext } from '../../../../test/support/turn-context';
import { pluginDataAt } from '../../plugin-host/journal-plugin-data';
import { turnStepReading } from '../turn-step';
import { type TurnHarness, turnHarness } from './harness';

/**
 * Issue 33: a turn step's read of the log brings the session's plugin data snapshot in the same
 * statement once the session's runs read it in this process: the reads of its stage at the
 * journal's plugin-data version are answered from it (no statement of their own), with the rows
 * the store holds; a session whose runs never read plugin data here reads none with the journal.
 */
describe('a turn step’s read brings the session’s plugin data (PGlite)', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await turnHarness();
  });
  afterAll(() => h.close());

  /** A session with one plugin-data row of `affinity` and an input waiting: its turn job. */
  async function sessionWithData() {
    const session = await h.session();
    await h.deps.store.append({
      ...session,
      streamId: session.sessionId,
      expectedVersion: 1,
      events: [
        {
          type: 'plugin-data.written@1',
          data: {
            executionId: randomUUID(),
            turnId: randomUUID(),
            attempt: 1,
            pluginId: 'affinity',
            namespace: 'scores',
            key: 'Ōkami 狼',
            value: { score: 3 },
          },
        },
      ],
    });
    return { session, job: await h.input(session, 'Greet the wolf') };
  }

  const scope = (session: { tenantId: string; sessionId: string }) => ({ ...session, pluginId: 'affinity' });

  it('its runs read plugin data here before: the snapshot comes with the journal, the stage’s reads take it', async () => {
    const { session, job } = await sessionWithData();
    // an earlier run of the session read its plugin data in this process
    expect(await pluginDataAt(h.deps.pluginData, { pluginDataVersion: 0 }).scope(scope(session)).get('scores', 'Ōkami 狼')).toEqual({ score: 3 });
    const reads = jest.spyOn(h.deps.pluginData, 'session');
    try {
      const { journal } = await turnStepReading(h.deps, job, turnContext(), { runs: () => true });
      const data = pluginDataAt(h.deps.pluginData, journal).scope(scope(session));
      expect(await data.get('scores', 'Ōkami 狼')).toEqual({ score: 3 });
      expect(await data.selfData('scores')).toMatchObject({ totalRows: 1 });
      expect(reads).not.toHaveBeenCalled();
    } finally {
      reads.mockRestore();
    }
  });

  it('a plugin-data event the journal takes in after the read: the snapshot at its version is made from the one read with the journal, no read; a failure reads again', async () => {
    const { session, job } = await sessionWithData();
    expect(await pluginDataAt(h.deps.pluginData, { pluginDataVersion: 0 }).scope(scope(session)).get('scores', 'Ōkami 狼')).toEqual({ score: 3 });
    const { journal } = await turnStepReading(h.deps, job, turnContext(), { runs: () => true });
    const execution = journal.get(job.executionId)!;
    const ids = { executionId: job.executionId, turnId: execution.turnId, attempt: 1, pluginId: 'affinity', namespace: 'scores' };
    const appended = async (events: Parameters<typeof h.deps.store.append>[0]['events']) => {
      const { events: stored } = await h.deps.store.append({ ...session, streamId: session.sessionId, expectedVersion: journal.version, events });
      journal.apply(stored);
    };
    // the claim, then a stage's writes (a pre-turn's world-init): a new row, the old one rewritten, another deleted
    await appended([{ type: 'execution.started@1', data: { executionId: job.executionId, turnId: execution.turnId, attempt: 1, workerId: 'w' } }]);
    await appended([
      { type: 'plugin-data.written@1', data: { ...ids, key: 'Mira', value: { score: 1 } } },
      { type: 'plugin-data.written@1', data: { ...ids, key: 'Ōkami 狼', value: { score: 4 } } },
      { type: 'plugin-data.written@1', data: { ...ids, key: 'gone', value: 0 } },
    ]);
    await appended([{ type: 'plugin-data.deleted@1', data: { ...ids, key: 'gone' } }]);
    const store = h.deps.pluginData.scope(scope(session));
    const reads = jest.spyOn(h.deps.pluginData, 'session');
    try {
      const data = pluginDataAt(h.deps.pluginData, journal).scope(scope(session));
      // what the store holds, rows in the same order (creation), recency and total
      expect(await data.selfData('scores')).toEqual(await store.selfData('scores'));
      expect(await data.list('scores')).toEqual(await store.list('scores'));
      expect(await data.get('scores', 'gone')).toBeUndefined();
      // was one read of the session's plugin data per stage after one that wrote any
      expect(reads).not.toHaveBeenCalled();
      // a failure folds the story again (the turn's writes leave the store): the next read is the store's
      await appended([{ type: 'execution.failed@1', data: { ...ids, error: { code: 'X', message: 'failed' }, discarded: true } } as never]);
      const after = pluginDataAt(h.deps.pluginData, journal).scope(scope(session));
      expect(await after.selfData('scores')).toEqual(await store.selfData('scores'));
      expect(await after.get('scores', 'Mira')).toBeUndefined();
      expect(reads).toHaveBeenCalledTimes(1);
    } finally {
      reads.mockRestore();
    }
  });

  it('its runs never read plugin data here: none read with the journal, the first read of a run makes the snapshot', async () => {
    const { session, job } = await sessionWithData();
    const reads = jest.spyOn(h.deps.pluginData, 'session');
    try {
      const { journal } = await turnStepReading(h.deps, job, turnContext(), { runs: () => true });
      expect(reads).not.toHaveBeenCalled();
      expect(await pluginDataAt(h.deps.pluginData, journal).scope(scope(session)).get('scores', 'Ōkami 狼')).toEqual({ score: 3 });
      expect(reads).toHaveBeenCalledTimes(1);
    } finally {
      reads.mockRestore();
    }
  });
});
