import type { StoredEvent } from '../../events';
import { sessionTurns, withTurnReverts } from '..';

let position = 0;
const event = (type: string, data: Record<string, unknown>, recordedAt = '2026-01-01T00:00:00.000Z'): StoredEvent =>
  ({ globalPosition: ++position, tenantId: 't', streamId: 's', streamVersion: position, type, data, metadata: {}, recordedAt }) as StoredEvent;

const input = (n: string, extra: Record<string, unknown> = {}) =>
  event('player-input.submitted@1', { executionId: `e${n}`, turnId: `t${n}`, messageId: `u${n}`, text: `input ${n}`, ...extra });
const committed = (n: string) => event('turn.committed@1', { executionId: `e${n}`, turnId: `t${n}`, attempt: 1, messages: [] });

describe('the turns view marks reverted and stopped turns', () => {
  it('a revert marks the turn it names and every later one (any alternative matches), with who and when; the turns after it are unmarked', () => {
    const events = [
      input('1'),
      committed('1'),
      input('2'),
      committed('2'),
      input('3'),
      committed('3'),
      // turn 3 regenerated: the revert names both of its executions
      input('3b', { retryFromTurnId: 't3', alternativeOf: 't3' }),
      event('turn.superseded@1', { alternativeOf: 't3', turnId: 't3', byTurnId: 't3b', byExecutionId: 'e3b', cause: 'retry' }),
      committed('3b'),
      event('turn.reverted@1', { turnId: 't2', turnIds: ['t2', 't3'], executionIds: ['e2', 'e3', 'e3b'], by: 'tenant:a' }, '2026-01-02T10:00:00.000Z'),
      input('4'),
      committed('4'),
      // a later revert naming a turn already out of the story does not move its mark
      event('turn.reverted@1', { turnId: 't4', turnIds: ['t4', 't3'], executionIds: ['e4', 'e3'], by: 'tenant:b' }, '2026-01-03T10:00:00.000Z'),
      input('5'),
    ];
    const turns = withTurnReverts(sessionTurns(events), events);
    expect(turns.map((t) => [t.number, t.turnId, t.reverted])).toEqual([
      [1, 't1', null],
      [2, 't2', { by: 'tenant:a', at: '2026-01-02T10:00:00.000Z', turnId: 't2' }],
      [3, 't3b', { by: 'tenant:a', at: '2026-01-02T10:00:00.000Z', turnId: 't2' }],
      [4, 't4', { by: 'tenant:b', at: '2026-01-03T10:00:00.000Z', turnId: 't4' }],
      [5, 't5', null],
    ]);
  });

  it('a stopped turn is `cancelled`, kept or not', () => {
    const events = [
      input('1'),
      event('execution.cancelled@1', { executionId: 'e1', turnId: 't1', keepPartial: false, by: 'tenant:a' }),
      input('2'),
      committed('2'),
    ];
    expect(sessionTurns(events).map((t) => [t.turnId, t.status, t.alternatives[0].status])).toEqual([
      ['t1', 'cancelled', 'cancelled'],
      ['t2', 'committed', 'committed'],
    ]);
  });
});
