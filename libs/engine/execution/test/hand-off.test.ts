import { InProcessQueue } from '../../queue';
import { handOff } from '../hand-off';
import { loadSessionJournal } from '../../session/session-reads';
import { eventually, type TurnHarness, turnHarness } from '../../turn/test/harness';

describe('the hand-off', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await turnHarness();
  });
  afterAll(() => h.close());

  it("enqueues the session's earliest pending execution, and nothing when none is pending", async () => {
    const session = await h.session();
    await handOff(h.deps, session, await loadSessionJournal(h.deps, session));
    const first = await h.input(session, 'first');
    await h.input(session, 'second');
    await handOff(h.deps, session, await loadSessionJournal(h.deps, session));
    await eventually(async () => h.enqueued.some((j) => j.sessionId === session.sessionId), 'an enqueue');
    expect(h.enqueued.filter((j) => j.sessionId === session.sessionId)).toEqual([{ ...session, executionId: first.executionId }]);
  });

  it('a queue that refuses the job is logged, not thrown (the sweeper enqueues it later)', async () => {
    const session = await h.session();
    const job = await h.input(session);
    const closed = new InProcessQueue();
    await closed.close();
    await handOff({ ...h.deps, queue: closed }, session, await loadSessionJournal(h.deps, session));
    expect(h.warnings.at(-1)).toMatch(new RegExp(`^hand-off to execution ${job.executionId} failed \\(.*closed.*\\); the sweeper will enqueue it$`));
  });
});
