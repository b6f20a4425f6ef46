import type { StoredEvent } from '../../events';
import { PriceTable } from '../../providers';
import { inspectTurnCalls, sessionTurns, turnCosts, withCallCosts, withTurnCosts } from '..';

let position = 0;
const event = (type: string, data: Record<string, unknown>): StoredEvent =>
  ({
    globalPosition: ++position,
    tenantId: 't',
    streamId: 's',
    streamVersion: position,
    type,
    data,
    metadata: {},
    recordedAt: '2026-01-01T00:00:00.000Z',
  }) as StoredEvent;

const asOf = '2026-12-01';
const prices = new PriceTable({ story: { input: 1, cachedInput: 0.1, output: 2, asOf }, fast: { input: 0.5, cachedInput: 0.05, output: 1, asOf } }, {});
const body = JSON.stringify({ model: 'x', messages: [{ role: 'user', content: 'hi' }] });
const ids = (turnId: string) => ({ executionId: `${turnId}-e`, turnId, pluginId: 'p', runtimeId: 'r' });
const input = (turnId: string) => event('player-input.submitted@1', { ...ids(turnId), text: `go ${turnId}` });
const calling = (turnId: string, callId: string, model: string) =>
  event('llm.calling@1', { ...ids(turnId), attempt: 1, callId, provider: 'openai-chat', model, body });
const responded = (turnId: string, callId: string, usage: { inputTokens: number; cachedInputTokens: number; outputTokens: number }) =>
  event('llm.responded@1', { ...ids(turnId), callId, finishReason: 'stop', usage, reply: JSON.stringify({ text: 'ok', toolCalls: [] }) });

describe('est. $ of the inspector views', () => {
  // turn a: two answered calls of two priced models; turn b: one answered, one never answered;
  // turn c: a call of a model without a price; turn d: no call at all
  const events = [
    input('a'),
    calling('a', 'a1', 'story'),
    responded('a', 'a1', { inputTokens: 10_000, cachedInputTokens: 8_000, outputTokens: 500 }), // 2,000×1 + 8,000×0.1 + 500×2 = 3,800 µ$
    calling('a', 'a2', 'fast'),
    responded('a', 'a2', { inputTokens: 4_000, cachedInputTokens: 0, outputTokens: 1_000 }), // 4,000×0.5 + 1,000×1 = 3,000 µ$
    input('b'),
    calling('b', 'b1', 'story'),
    responded('b', 'b1', { inputTokens: 1_000, cachedInputTokens: 0, outputTokens: 0 }), // 1,000 µ$
    calling('b', 'b2', 'story'),
    input('c'),
    calling('c', 'c1', 'house-model'),
    responded('c', 'c1', { inputTokens: 1_000, cachedInputTokens: 0, outputTokens: 10 }),
    input('d'),
  ];

  it('a call: its usage at its model’s price; null unanswered or unpriced; the turn’s total on each call', () => {
    expect(withCallCosts(inspectTurnCalls(events, 'a'), prices).map((c) => [c.callId, c.estCostUsd, c.turnEstCostUsd])).toEqual([
      ['a1', 0.0038, 0.0068],
      ['a2', 0.003, 0.0068],
    ]);
    expect(withCallCosts(inspectTurnCalls(events, 'b'), prices).map((c) => [c.callId, c.estCostUsd, c.turnEstCostUsd])).toEqual([
      ['b1', 0.001, 0.001],
      ['b2', null, 0.001],
    ]);
    expect(withCallCosts(inspectTurnCalls(events, 'c'), prices).map((c) => [c.callId, c.estCostUsd, c.turnEstCostUsd])).toEqual([['c1', null, null]]);
  });

  it('a turn of the list: the sum over its answered calls; null when one is unpriced; 0 without calls', () => {
    expect(withTurnCosts(sessionTurns(events), events, prices).map((t) => [t.turnId, t.estCostUsd])).toEqual([
      ['a', 0.0068],
      ['b', 0.001],
      ['c', null],
      ['d', 0],
    ]);
    expect(turnCosts(events, new PriceTable({}, {})).get('a')).toBeNull();
  });

  it('a call answered twice counts its last answer, as the calls view shows it', () => {
    const again = [...events, responded('b', 'b1', { inputTokens: 2_000, cachedInputTokens: 0, outputTokens: 0 })];
    expect(turnCosts(again, prices).get('b')).toBe(0.002);
    expect(withCallCosts(inspectTurnCalls(again, 'b'), prices)[0].estCostUsd).toBe(0.002);
  });
});
