import { buildContext, HistoryMessage, RuntimeView } from '..';

const narrator: RuntimeView = {
  pluginId: 'narrator',
  runtimeId: 'narrator',
  outputKind: 'story',
  body: 'You are the narrator.',
  history: { includeSummaries: false },
};

function turn(n: number, extra: Partial<HistoryMessage>[] = []): HistoryMessage[] {
  return [
    { messageId: `u${n}`, turnId: `t${n}`, role: 'user', sourceType: 'player', pluginId: null, runtimeId: null, outputKind: null, text: `input ${n}` },
    { messageId: `a${n}`, turnId: `t${n}`, role: 'assistant', sourceType: 'runtime', pluginId: 'narrator', runtimeId: 'narrator', outputKind: 'story', text: `story ${n}` },
    ...extra.map((e, i) => ({ messageId: `x${n}-${i}`, turnId: `t${n}`, role: 'assistant' as const, sourceType: 'runtime' as const, pluginId: 'other', runtimeId: 'r', outputKind: 'structured' as const, text: 'data', ...e })),
  ];
}

describe('buildContext (first cut)', () => {
  it('system prompt is the runtime body; messages are history then the current player input', async () => {
    const ctx = await buildContext({ locale: 'en', runtime: narrator, history: [...turn(1), ...turn(2)], playerInput: { messageId: 'u3', text: 'go north' } });
    expect(ctx.systemPrompt).toBe('You are the narrator.');
    expect(ctx.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'input 1'],
      ['assistant', 'story 1'],
      ['user', 'input 2'],
      ['assistant', 'story 2'],
      ['user', 'go north'],
    ]);
    expect(ctx.turnContext).toBe('');
  });

  it('§1 step 3: other plugins\' structured output and empty runtime rows are filtered', async () => {
    const ctx = await buildContext({
      locale: 'en',
      runtime: narrator,
      history: turn(1, [{}, { pluginId: 'narrator', outputKind: 'story', text: '  ' }]),
      playerInput: { messageId: 'u2', text: 'x' },
    });
    expect(ctx.messages.map((m) => m.content)).toEqual(['input 1', 'story 1', 'x']);
  });

  it('§1 maxTurns counts turns by turnId; 0 still sends the player input', async () => {
    const history = [...turn(1), ...turn(2), ...turn(3)];
    const two = await buildContext({ locale: 'en', runtime: { ...narrator, history: { maxTurns: 2, includeSummaries: false } }, history, playerInput: { messageId: 'u4', text: 'now' } });
    expect(two.messages.map((m) => m.content)).toEqual(['input 2', 'story 2', 'input 3', 'story 3', 'now']);
    const zero = await buildContext({ locale: 'en', runtime: { ...narrator, history: { maxTurns: 0, includeSummaries: false } }, history, playerInput: { messageId: 'u4', text: 'now' } });
    expect(zero.messages).toEqual([{ role: 'user', content: 'now' }]);
  });
});
