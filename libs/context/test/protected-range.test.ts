import { type AssembledContext, buildContext, type ContextMessage } from '..';
import { history, params, segment, tracker } from './fixtures';

describe('§1 Protected range: the current turn is kept together', () => {
  it('covers turn context, player input, story text, ending hint and mid-turn player messages', async () => {
    const ctx = await buildContext(
      params({
        runtime: tracker,
        segments: [
          segment('mem', { volatility: 'turn', audience: undefined }),
          segment('post', { position: 'post-history', role: 'user', audience: undefined }),
        ],
        executionOutputs: [{ pluginId: 'narrator', runtimeId: 'narrator', outputKind: 'story', stageIndex: 1, text: 'story now' }],
        midTurnMessages: [{ text: 'wait, also look up' }],
      }),
    );
    const { start, end } = ctx.protectedRange;
    expect(ctx.messageSections.slice(start, end)).toEqual(['turn-context', 'player-input', 'story-text', 'ending-hint', 'mid-turn']);
    expect(ctx.messageSections[end]).toBe('post-history');
    expect(ctx.continuation.currentTurnUserMessages).toEqual([
      { role: 'user', content: 'go north' },
      { role: 'user', content: 'wait, also look up' },
    ]);
  });

  it('a paused runtime resumes with the saved range, the same as before the pause', async () => {
    const before = await buildContext(params({ midTurnMessages: [{ text: 'and then?' }] }));
    const resumed = await buildContext(params({ playerInput: { messageId: 'x', text: 'something newer' }, resume: before.continuation }));
    const slice = (c: typeof before) => c.messages.slice(c.protectedRange.start, c.protectedRange.end);
    expect(slice(resumed)).toEqual(slice(before));
    expect(resumed.continuation).toEqual(before.continuation);
  });
});

describe('§1/§5 protected content after PostContextAssembly', () => {
  const story = [{ pluginId: 'narrator', runtimeId: 'narrator', outputKind: 'story' as const, stageIndex: 0, text: 'The door opens.' }];
  const base = {
    runtime: tracker,
    history: history(3),
    segments: [
      segment('mem', { volatility: 'turn' as const, audience: undefined }),
      segment('post', { position: 'post-history' as const, role: 'user' as const, audience: undefined }),
    ],
    executionOutputs: story,
    midTurnMessages: [{ text: 'wait, also look up' }],
  };
  const current = ['<mem/>', 'go north', 'The door opens.', expect.stringMatching(/./), 'wait, also look up'];
  const protectedSlice = (c: AssembledContext) => c.messages.slice(c.protectedRange.start, c.protectedRange.end).map((m) => m.content);

  it('a hook that drops history messages: the range still covers the current turn, within bounds', async () => {
    const ctx = await buildContext(
      params({ ...base, runtime: { ...tracker, history: {} }, postContextAssembly: [(p) => ({ messages: p.messages.slice(4) })] }),
    );
    expect(ctx.protectedRange.end).toBeLessThanOrEqual(ctx.messages.length);
    expect(protectedSlice(ctx)).toEqual(current);
    expect(ctx.messageSections.slice(ctx.protectedRange.start, ctx.protectedRange.end)).toEqual([
      'turn-context',
      'player-input',
      'story-text',
      'ending-hint',
      'mid-turn',
    ]);
    expect(ctx.turnContext).toBe('<mem/>');
  });

  it('a hook that inserts messages before and inside the current turn: the range moves with it', async () => {
    const ctx = await buildContext(
      params({
        ...base,
        postContextAssembly: [
          (p) => {
            const at = p.messages.findIndex((m) => m.content === 'go north');
            return {
              messages: [{ role: 'user', content: 'NOTE A' }, ...p.messages.slice(0, at + 1), { role: 'user', content: 'NOTE B' }, ...p.messages.slice(at + 1)],
            };
          },
        ],
      }),
    );
    expect(ctx.messages[0].content).toBe('NOTE A');
    expect(protectedSlice(ctx)).toEqual(['<mem/>', 'go north', 'NOTE B', 'The door opens.', expect.stringMatching(/./), 'wait, also look up']);
    expect(ctx.messages[ctx.protectedRange.end].content).toBe('<post/>');
  });

  it('current-turn messages are known by identity, not by equal text: an equal history message dropped stays dropped', async () => {
    // the oldest history message has the same text as the player input; the hook drops it and
    // returns the rest as new objects
    const hist = history(2).map((m, i) => (i === 0 ? { ...m, text: 'go north' } : m));
    const ctx = await buildContext(params({ history: hist, postContextAssembly: [(p) => ({ messages: p.messages.slice(1).map((m) => ({ ...m })) })] }));
    expect(ctx.messages.map((m) => m.content)).toEqual(['story 1', 'input 2', 'story 2', 'go north']);
    expect(ctx.messageSections).toEqual(['history', 'history', 'history', 'player-input']);
    expect(ctx.protectedRange).toEqual({ start: 3, end: 4 });
  });

  it('a hook that drops the whole current turn leaves an empty range at the end, never past it', async () => {
    const ctx = await buildContext(params({ ...base, postContextAssembly: [(p) => ({ messages: p.messages.slice(0, 2) })] }));
    expect(ctx.messages).toHaveLength(2);
    expect(ctx.protectedRange).toEqual({ start: 2, end: 2 });
    expect(ctx.turnContext).toBe('');
  });

  it('a hook that rewrites the turn context in place: turnContext holds what is sent', async () => {
    const ctx = await buildContext(
      params({
        ...base,
        postContextAssembly: [
          (p) => {
            for (const m of p.messages) if (m.content === '<mem/>') m.content = '<mem trimmed/>';
            return { messages: p.messages };
          },
        ],
      }),
    );
    expect(ctx.turnContext).toBe('<mem trimmed/>');
    expect(protectedSlice(ctx)[0]).toBe('<mem trimmed/>');
  });

  it('the summary envelope is in the protected set, before and after hooks', async () => {
    const summaries = [{ id: 's1', content: 'Earlier, the party crossed the ridge.' }];
    const plain = await buildContext(params({ summaries }));
    const summaryAt = plain.messageSections.indexOf('summary');
    expect(summaryAt).toBe(0);
    expect(plain.protectedIndexes).toEqual([summaryAt, ...range(plain.protectedRange)]);
    expect(plain.protectedIndexes).not.toContain(1); // history is not protected

    const hooked = await buildContext(
      params({
        summaries,
        segments: [segment('pre', { position: 'pre-history', role: 'user', audience: undefined })],
        postContextAssembly: [(p) => ({ messages: p.messages.filter((m) => m.content !== 'input 1') })],
      }),
    );
    const at = hooked.messageSections.indexOf('summary');
    expect(hooked.messages[at].content).toMatch(/^<compacted_history>/);
    expect(hooked.protectedIndexes).toContain(at);
    expect(hooked.protectedIndexes).toEqual([at, ...range(hooked.protectedRange)]);
  });

  it('a resumed runtime with a rewriting hook gets the same protected messages as before the pause', async () => {
    const shout = (p: { messages: ContextMessage[] }) => ({
      messages: p.messages.map((m) => (m.role === 'user' ? Object.assign(m, { content: `${m.content}!` }) : m)),
    });
    const before = await buildContext(params({ midTurnMessages: [{ text: 'and then?' }], postContextAssembly: [shout] }));
    const resumed = await buildContext(params({ playerInput: { messageId: 'x', text: 'newer' }, resume: before.continuation, postContextAssembly: [shout] }));
    expect(protectedSlice(resumed)).toEqual(['go north!', 'and then?!']);
    expect(protectedSlice(resumed)).toEqual(protectedSlice(before));
  });
});

function range({ start, end }: { start: number; end: number }): number[] {
  return Array.from({ length: end - start }, (_, i) => start + i);
}
