import { DeadlineAdapter } from '../../../providers';
import { auditTurn } from '../../audit/turn-audit';
import { historyReadLimit } from '../../execution/deps';
import type { TurnHarness } from '../../turn/test/harness';
import { eventData, playTurn, smallWindowHarness } from '../../barrier/test/long-session';
import { workerAssemblies } from '../assembly-reuse';
import { sameData } from '../same-data';

describe('sameData: a proof that two values are the same plain data', () => {
  it('primitives by Object.is, arrays by element, plain objects by keys in order and values; anything else only as the same object', () => {
    expect(sameData({ a: [1, 'x', null, { b: true }] }, { a: [1, 'x', null, { b: true }] })).toBe(true);
    expect(sameData(Object.assign(Object.create(null) as object, { a: 1 }), { a: 1 })).toBe(true);
    expect(sameData(NaN, NaN)).toBe(true);
    expect(sameData(0, -0)).toBe(false);
    expect(sameData({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(false); // key order can show in what is built from them
    expect(sameData({ a: undefined }, {})).toBe(false);
    expect(sameData([1, 2], [1, 2, 3])).toBe(false);
    expect(sameData([1], { 0: 1, length: 1 })).toBe(false);
    expect(sameData('𠮷', '𠮷')).toBe(true);
    expect(sameData('e\u0301', '\u00e9')).toBe(false);
    const date = new Date(0);
    expect(sameData(date, date)).toBe(true);
    expect(sameData(new Date(0), new Date(0))).toBe(false);
    expect(sameData(new Map([[1, 2]]), new Map([[1, 2]]))).toBe(false);
    expect(sameData({ [Symbol('s')]: 1 }, {})).toBe(false);
    const f = () => 1;
    expect(sameData({ f }, { f })).toBe(true);
    expect(sameData({ f }, { f: () => 1 })).toBe(false);
  });
});

describe('a turn assembles its first agent’s context once: the compaction barrier’s estimate builds it, the step takes it again', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await smallWindowHarness();
  });
  afterAll(() => h.close());

  it('one assembly built and one reused, one wire body built per narrator turn; every request as its rebuild from the log, byte for byte', async () => {
    const session = await h.session();
    const turnIds: string[] = [];
    const wireBodies = jest.spyOn(DeadlineAdapter.prototype, 'buildRequest');
    for (let i = 1; i <= 3; i++) {
      const before = { ...workerAssemblies.counts };
      wireBodies.mockClear();
      const job = await playTurn(h, session, `Turn ${i}: I open the door.`);
      turnIds.push(job.turnId);
      // the barrier's estimate (no budget) and the step (with it) assembled the same params: built once
      expect({ built: workerAssemblies.counts.built - before.built, reused: workerAssemblies.counts.reused - before.reused }).toEqual({ built: 1, reused: 1 });
      // the estimate reads the call, not its wire body: the step's is the turn's one body
      expect(wireBodies).toHaveBeenCalledTimes(1);
    }
    wireBodies.mockRestore();
    const events = await h.events(session.sessionId);
    expect(eventData(events, 'compaction.barrier-passed@1')).toEqual([]); // the estimates were under the threshold
    expect(eventData(events, 'llm.calling@1')).toHaveLength(3);
    for (const turnId of turnIds)
      expect((await auditTurn({ ...h.deps, historyReadLimit: historyReadLimit(h.deps) }, session.sessionId, turnId)).identical).toBe(true);
  }, 120_000);
});
