import { buildContext } from '..';
import { params, segment, tracker } from './fixtures';

describe('§1 Protected range: the current turn is kept together', () => {
  it('covers turn context, player input, story text, ending hint and mid-turn player messages', async () => {
    const ctx = await buildContext(
      params({
        runtime: tracker,
        segments: [
          segment('mem', { volatility: 'turn', audience: undefined }),
          segment('post', { position: 'post-history', role: 'user', audience: undefined }),
        ],
        executionOutputs: [{ pluginId: 'narrator', runtimeId: 'narrator', outputKind: 'story', stageIndex: 1, text: 'story now', seeded: false }],
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
