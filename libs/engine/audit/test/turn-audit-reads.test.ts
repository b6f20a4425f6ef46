import { type EventStore, OMITTED_CALL_BODY, type StoredEvent } from '../../../events';
import { historyReadLimit } from '../../execution/deps';
import { playTurn, type TurnHarness, turnHarness } from '../../turn/test/harness';
import { TurnRunner } from '../../turn/turn-runner';
import { auditTurn } from '../turn-audit';

type Calling = Extract<StoredEvent, { type: 'llm.calling@1' }>;
const callsOf = (events: readonly StoredEvent[]) => events.filter((e): e is Calling => e.type === 'llm.calling@1');

/** The store, noting every event any of its reads hands out. */
function observed(store: EventStore, seen: StoredEvent[]): EventStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        const result = (await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args)) as unknown;
        if (Array.isArray(result)) seen.push(...(result as StoredEvent[]));
        return result;
      };
    },
  });
}

describe("a turn's audit reads the other turns' calls without their request bodies", () => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await turnHarness({ handlers: (deps) => new TurnRunner(deps) });
  });
  afterAll(() => h.close());

  it('folds every event, compares only its turn, identical; the bodies of the other turns are never read', async () => {
    const session = await h.session();
    const turns: string[] = [];
    for (const text of ['Open the door', 'Walk to the gate', 'Knock twice']) turns.push((await playTurn(h, session, text)).job.turnId);
    const all = await h.events(session.sessionId);
    const otherBodies = new Set(
      callsOf(all)
        .filter((c) => c.data.turnId !== turns[1])
        .map((c) => c.data.body),
    );
    expect(otherBodies.size).toBeGreaterThan(1);

    const seen: StoredEvent[] = [];
    const audit = await auditTurn({ ...h.deps, store: observed(h.deps.store, seen), historyReadLimit: historyReadLimit(h.deps) }, session.sessionId, turns[1]);
    expect(audit.identical).toBe(true);
    expect(audit.calls.length).toBe(callsOf(all).filter((c) => c.data.turnId === turns[1]).length);
    expect(audit.calls.length).toBeGreaterThan(0);
    // every event of the session was read, but no request body of another turn
    expect(seen.map((e) => e.streamVersion)).toEqual(expect.arrayContaining(all.map((e) => e.streamVersion)));
    expect(callsOf(seen).filter((c) => otherBodies.has(c.data.body))).toEqual([]);
  });

  it('readStreamForTurn is readStream with the other turns’ request bodies left out, nothing else', async () => {
    const session = await h.session();
    const turns: string[] = [];
    for (const text of ['Open the door', 'Walk to the gate']) turns.push((await playTurn(h, session, text)).job.turnId);
    const all = await h.events(session.sessionId);
    const expected = all.map((e) => (e.type === 'llm.calling@1' && e.data.turnId !== turns[0] ? { ...e, data: { ...e.data, body: OMITTED_CALL_BODY } } : e));
    expect(await h.deps.store.readStreamForTurn(session.sessionId, turns[0])).toEqual(expected);
    expect(callsOf(expected).map((c) => c.data.body === OMITTED_CALL_BODY)).toEqual(callsOf(all).map((c) => c.data.turnId !== turns[0]));
  });
});
