import { serializeSystemPrompt, type SystemSection } from '../../context';
import type { StoredEvent } from '../../events';
import { AnthropicAdapter, type ChatMessage, OpenAIChatAdapter } from '../../providers';
import { inspectTurnCalls, sessionTurns } from '..';

const S = 'session-1';
let position = 0;
const event = (type: string, data: Record<string, unknown>): StoredEvent =>
  ({
    globalPosition: ++position,
    tenantId: 't',
    streamId: S,
    streamVersion: position,
    type,
    data,
    metadata: {},
    recordedAt: '2026-01-01T00:00:00.000Z',
  }) as StoredEvent;

const sections = (turn: number): SystemSection[] => [
  { name: 'preamble', text: 'PRE' },
  { name: 'runtime-body', text: 'BODY' },
  { name: 'worldinfo-before', text: 'LORE' },
  { name: 'turn-segments', text: `mood ${turn}` },
];

/** The messages of turn n: the history of the turns before, then the input. */
const conversation = (n: number): ChatMessage[] => [
  ...Array.from({ length: n - 1 }, (_, i): ChatMessage[] => [
    { role: 'user', content: `input ${i + 1}` },
    { role: 'assistant', content: `story ${i + 1}`, ...(i === n - 2 ? { endsHistory: true } : {}) },
  ]).flat(),
  { role: 'user', content: `input ${n}` },
];

function calling(protocol: 'anthropic' | 'openai-chat', turn: number, step = 1) {
  const messages: ChatMessage[] = [{ role: 'system', content: serializeSystemPrompt(sections(turn), true) }, ...conversation(turn)];
  const call = { model: 'm', messages, cacheBoundaries: true };
  const body = protocol === 'anthropic' ? new AnthropicAdapter({ apiKey: 'k' }).buildRequest(call) : new OpenAIChatAdapter({ apiKey: 'k' }).buildRequest(call);
  const history = Array.from({ length: 2 * (turn - 1) }, () => 'history');
  return event('llm.calling@1', {
    executionId: `e${turn}`,
    turnId: `t${turn}`,
    attempt: 1,
    callId: `c${turn}.${step}`,
    pluginId: 'narrator',
    runtimeId: 'narrator',
    provider: protocol,
    model: 'm',
    step,
    body: JSON.stringify(body),
    layout: { systemSections: sections(turn).map((s) => ({ name: s.name, length: s.text.length })), messageSections: ['system', ...history, 'player-input'] },
  });
}

const input = (turn: number) =>
  event('player-input.submitted@1', { executionId: `e${turn}`, turnId: `t${turn}`, messageId: `u${turn}`, text: `input ${turn}` });
const responded = (turn: number, step = 1) =>
  event('llm.responded@1', {
    executionId: `e${turn}`,
    turnId: `t${turn}`,
    callId: `c${turn}.${step}`,
    pluginId: 'narrator',
    runtimeId: 'narrator',
    finishReason: 'stop',
    step,
    usage: { inputTokens: 100, outputTokens: 10, cachedInputTokens: 40 * turn },
    reply: JSON.stringify({ text: `story ${turn}`, toolCalls: [] }),
  });
const committed = (turn: number) => event('turn.committed@1', { executionId: `e${turn}`, turnId: `t${turn}`, attempt: 1, messages: [] });

describe('turn inspection (what the web inspector shows)', () => {
  it('openai-chat: the system prompt split into its recorded sections; the stripped sentinels drawn where the layout places them; messages labelled', () => {
    const events = [input(1), calling('openai-chat', 1), responded(1), committed(1), input(2), calling('openai-chat', 2), responded(2), committed(2)];
    const [call] = inspectTurnCalls(events, 't2');
    const system = call.units[0];
    expect(system.text).toBe('PRE\n\nBODY\n\nLORE\n\nmood 2');
    expect(system.spans.map((s) => [s.name, system.text.slice(s.start, s.end)])).toEqual([
      ['preamble', 'PRE'],
      ['runtime-body', 'BODY'],
      ['worldinfo-before', 'LORE'],
      ['turn-segments', 'mood 2'],
    ]);
    // boundaries after preamble and runtime-body only (worldinfo-before and turn segments set none)
    expect(system.cacheBoundaries).toEqual([
      { offset: 3, kind: 'sentinel', after: 'preamble' },
      { offset: 9, kind: 'sentinel', after: 'runtime-body' },
    ]);
    expect(call.units.map((u) => u.section)).toEqual(['system', 'history', 'history', 'player-input']);
    // the turn segment changed: the first difference is in the system prompt, after the shared sections
    expect(call.comparison).toMatchObject({ previousCallId: 'c1.1', previousTurnId: 't1', differsAtUnit: 0 });
    expect(call.comparison!.firstDifference).toMatchObject({ messageIndex: 0, section: 'turn-segments', offset: 'PRE\n\nBODY\n\nLORE\n\nmood '.length });
    expect(call.usage).toEqual({ inputTokens: 100, outputTokens: 10, cachedInputTokens: 80 });
    expect(call.reply).toEqual({ text: 'story 2', toolCalls: [] });
  });

  it('anthropic: the cache_control breakpoints the adapter set, at the end of their blocks; no sentinel drawn', () => {
    const events = [input(1), calling('anthropic', 1), input(2), calling('anthropic', 2)];
    const [call] = inspectTurnCalls(events, 't2');
    const system = call.units.find((u) => u.kind === 'system')!;
    expect(system.cacheBoundaries).toEqual([
      { offset: 3, kind: 'cache_control', after: 'preamble' },
      { offset: 9, kind: 'cache_control', after: 'runtime-body' },
    ]);
    const messages = call.units.filter((u) => u.kind === 'message');
    // the history boundary (the last history message) and the last block of the request
    expect(messages.map((m) => m.cacheBoundaries.map((b) => b.offset))).toEqual([[], ['story 1'.length], ['input 2'.length]]);
    expect(messages.map((m) => m.section)).toEqual(['history', 'history', 'player-input']);
  });

  it('a later step is compared with the previous step of its turn, the first call with the previous turn’s first; tool calls and results are attached to their step', () => {
    const tool = { executionId: 'e2', turnId: 't2', attempt: 1, pluginId: 'narrator', runtimeId: 'narrator', step: 1, toolCallId: 'x', name: 'roll' };
    const events = [
      input(1),
      calling('openai-chat', 1),
      calling('openai-chat', 1, 2),
      input(2),
      calling('openai-chat', 2),
      event('tool.called@1', { ...tool, arguments: '{"sides":6}' }),
      event('tool.completed@1', { ...tool, content: '4', ok: true }),
      calling('openai-chat', 2, 2),
    ];
    const calls = inspectTurnCalls(events, 't2');
    expect(calls.map((c) => [c.callId, c.comparison?.previousCallId])).toEqual([
      ['c2.1', 'c1.1'],
      ['c2.2', 'c2.1'],
    ]);
    expect(calls[1].comparison!.firstDifference).toBeNull();
    expect(calls[1].comparison!.differsAtUnit).toBeNull();
    expect(calls[0].tools).toEqual([{ toolCallId: 'x', name: 'roll', arguments: '{"sides":6}', content: '4', ok: true }]);
    expect(calls[1].tools).toEqual([]);
    expect(inspectTurnCalls(events, 't1')[0].comparison).toBeNull();
  });

  it('the turns of a session with their request sizes and provider cache reads', () => {
    const events = [input(1), calling('openai-chat', 1), responded(1), committed(1), input(2), calling('openai-chat', 2)];
    const turns = sessionTurns(events);
    expect(turns.map((t) => [t.number, t.turnId, t.input, t.status, t.calls, t.providerInputTokens, t.providerCachedTokens])).toEqual([
      [1, 't1', 'input 1', 'committed', 1, 100, 40],
      [2, 't2', 'input 2', 'running', 1, null, null],
    ]);
    expect(turns[1].requestTokensEstimate).toBeGreaterThan(turns[0].requestTokensEstimate);
  });

  it('a regeneration is an alternative of its turn, not a turn of its own; the turn shows the alternative in the history', () => {
    // turn 2 played, regenerated (committed: it takes the place), regenerated again (failed), then the first one selected back
    const retry = (id: string) =>
      event('player-input.submitted@1', {
        executionId: `e${id}`,
        turnId: `t${id}`,
        messageId: `u${id}`,
        text: 'input 2',
        retryFromTurnId: 't2',
        alternativeOf: 't2',
      });
    const again = (id: string, usage: number) => [
      event('llm.calling@1', { ...calling('openai-chat', 2).data, executionId: `e${id}`, turnId: `t${id}`, callId: `c${id}` }),
      event('llm.responded@1', {
        ...responded(2).data,
        executionId: `e${id}`,
        turnId: `t${id}`,
        callId: `c${id}`,
        usage: { inputTokens: usage, outputTokens: 1, cachedInputTokens: 0 },
      }),
    ];
    const superseded = (turnId: string, byTurnId: string, cause: 'retry' | 'select') =>
      event('turn.superseded@1', { alternativeOf: 't2', turnId, byTurnId, byExecutionId: `e${byTurnId.slice(1)}`, cause });
    const played = [input(1), calling('openai-chat', 1), responded(1), committed(1), input(2), calling('openai-chat', 2), responded(2), committed(2)];
    const regenerated = [
      ...played,
      retry('2b'),
      ...again('2b', 7),
      superseded('t2', 't2b', 'retry'),
      event('turn.committed@1', { executionId: 'e2b', turnId: 't2b', attempt: 1, messages: [] }),
    ];
    const failedAgain = [...regenerated, retry('2c'), event('execution.failed@1', { executionId: 'e2c', turnId: 't2c', error: { message: 'x' } })];

    const turns = sessionTurns(failedAgain);
    expect(turns.map((t) => [t.number, t.turnId, t.status, t.providerInputTokens])).toEqual([
      [1, 't1', 'committed', 100],
      [2, 't2b', 'committed', 7],
    ]);
    expect(turns[1].alternatives.map((a) => [a.turnId, a.status, a.calls, a.selected])).toEqual([
      ['t2', 'committed', 1, false],
      ['t2b', 'committed', 1, true],
      ['t2c', 'failed', 0, false],
    ]);
    expect(turns[0].alternatives).toEqual([{ turnId: 't1', executionId: 'e1', status: 'committed', calls: 1, selected: true }]);

    // the regeneration's request is compared with the turn before (the history it re-ran from), not with its sibling
    const [regeneratedCall] = inspectTurnCalls(regenerated, 't2b');
    expect([regeneratedCall.comparison!.previousCallId, regeneratedCall.comparison!.previousTurnId]).toEqual(['c1.1', 't1']);
    expect(regeneratedCall.comparison!.firstDifference).not.toBeNull();
    const next = [...regenerated, input(3), event('llm.calling@1', { ...calling('openai-chat', 3).data })];
    expect(inspectTurnCalls(next, 't3')[0].comparison!.previousCallId).toBe('c2b');

    const selectedBack = sessionTurns([...failedAgain, superseded('t2b', 't2', 'select')]);
    expect(selectedBack[1].turnId).toBe('t2');
    expect(selectedBack[1].providerInputTokens).toBe(100);
    expect(selectedBack[1].alternatives.map((a) => a.selected)).toEqual([true, false, false]);
  });
});
