import { randomUUID } from 'node:crypto';
import type { NewEvent, StoredEvent } from '../../../events';
import { turnContext } from '../../../../test/support/turn-context';
import type { TurnJob } from '../../queue';
import { TurnRunner } from '../turn-runner';
import { STAGED_PLUGINS, type TurnHarness, turnHarness } from './harness';

/**
 * Issue 33: the step after a stage run inline goes on from the journal the stage's appends kept
 * current, with no read of the log. What the player sends between two stages (after the first
 * stage's last append, before the next step) is then met by the next stage's first append, which
 * catches up under the stream's lock and checks the fence: a cancel ends the run before any model
 * call of the next stage; a mid-turn message is in the log before that stage's first call is recorded.
 */
describe('a player message between two stages run inline (PGlite)', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await turnHarness({ pluginsDir: STAGED_PLUGINS });
  });
  afterAll(() => h.close());

  const outputsOf = (events: readonly StoredEvent[], executionId: string) =>
    events.flatMap((e) => (e.type === 'runtime.output.produced@1' && e.data.executionId === executionId ? [e.data.runtimeId] : []));

  /** Runs a turn job whose pre-turn stage (mood, scene) runs inline; `between` is appended right after that stage's last append. */
  async function turnWithBetween(between: (job: TurnJob & { turnId: string }) => NewEvent) {
    const session = await h.session();
    const job = await h.input(session, 'Cross the bridge');
    const store = h.deps.store;
    const append = store.appendCatchingUp.bind(store);
    let injected: number | undefined;
    const spy = jest.spyOn(store, 'appendCatchingUp').mockImplementation(async (request) => {
      const result = await append(request);
      if (injected === undefined && request.streamId === session.sessionId) {
        const events = await store.readStream(session.sessionId);
        const outputs = outputsOf(events, job.executionId);
        if (outputs.includes('mood') && outputs.includes('scene')) {
          injected = (await store.append({ ...session, streamId: session.sessionId, expectedVersion: events.length, events: [between(job)] })).version;
        }
      }
      return result;
    });
    const calls = h.emulator.requests.length;
    try {
      const step = await new TurnRunner(h.deps).turn(job, turnContext());
      return { step, job, injected, events: await h.events(session.sessionId), calls: h.emulator.requests.length - calls };
    } finally {
      spy.mockRestore();
    }
  }

  it('a cancel: no model call of the next stage, nothing recorded after it, the job ends', async () => {
    const { step, injected, events, calls, job } = await turnWithBetween((j) => ({
      type: 'execution.cancelled@1',
      data: { executionId: j.executionId, turnId: j.turnId, keepPartial: false, by: 'tenant:test' },
    }));
    expect(injected).toBeDefined();
    expect(step).toEqual({ kind: 'done' });
    expect(events.filter((e) => e.streamVersion > injected!)).toEqual([]);
    expect(outputsOf(events, job.executionId).sort()).toEqual(['mood', 'scene']);
    expect(calls).toBe(2); // mood's and scene's, none after the cancel
  });

  it('a mid-turn message: in the log before the next stage’s first call is recorded; the turn commits once with it', async () => {
    const { step, injected, events, job } = await turnWithBetween((j) => ({
      type: 'player-input.mid-turn@1',
      data: { executionId: j.executionId, turnId: j.turnId, messageId: randomUUID(), text: 'Wait, look behind you' },
    }));
    expect(injected).toBeDefined();
    expect(step).toEqual({ kind: 'done' });
    expect(events.filter((e) => e.type === 'turn.committed@1' && e.data.executionId === job.executionId)).toHaveLength(1);
    // the next stage's first call is recorded after it (its append caught it up); on main the step's read
    // brought it into that call (midTurnMessages 1), here the call built before the catch-up goes without it
    // and the message reaches the next call or is placed by the commit (as one arriving during a call is)
    const narrator = events.find((e) => e.type === 'llm.calling@1' && e.data.runtimeId === 'narrator');
    expect(narrator!.streamVersion).toBeGreaterThan(injected!);
    const committed = events.find((e) => e.type === 'turn.committed@1');
    expect(JSON.stringify(committed!.data)).toContain('Wait, look behind you');
  });
});
