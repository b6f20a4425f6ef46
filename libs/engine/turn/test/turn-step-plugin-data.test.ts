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
