import { buildContext, CACHE_BREAK, stripCacheBreaks } from '..';
import { history, narrator, params, segment } from './fixtures';

const plain = (s: string) => stripCacheBreaks(s);

describe('§2 Sections and order', () => {
  it('systemPrompt: preamble, body, stable/session segments, WorldInfo before, events + in-stage activation, WorldInfo after, pre-history turn segments', async () => {
    const ctx = await buildContext(
      params({
        activation: { kind: 'stage', stage: 'narrative' },
        segments: [
          segment('turn-pre', { position: 'pre-history', volatility: 'turn' }),
          segment('stable-sys'),
          segment('session-pre', { position: 'pre-history', volatility: 'session' }),
        ],
        lorebook: [
          { id: 'after', content: 'LORE-AFTER', position: 'after-plugin', order: 0, reason: { kind: 'constant' } },
          { id: 'before', content: 'LORE-BEFORE', position: 'before-plugin', order: 0, reason: { kind: 'constant' } },
        ],
        eventCatalog: [{ topic: 'door.opened', description: 'A door opens', requiredFields: ['door'] }],
      }),
    );
    expect(ctx.systemSections.map((s) => s.name)).toEqual([
      'preamble',
      'runtime-body',
      'segments',
      'worldinfo-before',
      'events-activation',
      'worldinfo-after',
      'turn-segments',
    ]);
    const text = plain(ctx.systemPrompt);
    const order = [
      '[RUNTIME]',
      'You are the narrator.',
      '<stable-sys/>',
      '<session-pre/>',
      'LORE-BEFORE',
      '<available-events>',
      '<runtime-activation>',
      'LORE-AFTER',
      '<turn-pre/>',
    ];
    const positions = order.map((s) => text.indexOf(s));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    // spec §6: the world-rules title is fixed text in the instruction language (English here)
    const section = (name: string) => ctx.systemSections.find((s) => s.name === name)!.text;
    expect([section('worldinfo-before'), section('worldinfo-after')]).toEqual(['World rules:\n\nLORE-BEFORE', 'World rules:\n\nLORE-AFTER']);
  });

  it('system sections are joined with one blank line and empty sections are skipped', async () => {
    const ctx = await buildContext(params());
    expect(ctx.systemSections.map((s) => s.name)).toEqual(['preamble', 'runtime-body']);
    expect(plain(ctx.systemPrompt)).toBe(`${ctx.systemSections[0].text}\n\n${ctx.systemSections[1].text}`);
  });

  it('messages: pre-history, summary, history, turn context, images, input, story text + hint, depth, post-history', async () => {
    const ctx = await buildContext(
      params({
        runtime: { ...narrator, stageIndex: 2 },
        summaries: [{ id: 's1', content: 'Earlier, things happened.', messageIds: ['m0'] }],
        segments: [
          segment('pre-user', { position: 'pre-history', role: 'user' }),
          segment('turn-sys', { position: 'system', volatility: 'turn' }),
          segment('post', { position: 'post-history', role: 'user' }),
          segment('deep', { position: { depth: 0 }, role: 'user' }),
        ],
        recentImages: [{ mediaId: 'img1', description: 'An image was shown: a red door.' }],
        executionOutputs: [{ pluginId: 'narrator', runtimeId: 'narrator', outputKind: 'story', stageIndex: 1, text: 'STORY NOW' }],
      }),
    );
    expect(ctx.messageSections).toEqual([
      'pre-history',
      'summary',
      'history',
      'history',
      'history',
      'history',
      'turn-context',
      'recent-images',
      'player-input',
      'story-text',
      'ending-hint',
      'depth',
      'post-history',
    ]);
    expect(ctx.messages[6]).toEqual({ role: 'system', content: '<turn-sys/>' });
    expect(ctx.turnContext).toBe('<turn-sys/>');
    // spec §6: the explanatory sentence after the summary block, in the instruction language (English here)
    expect(ctx.messages[1]).toEqual({
      role: 'user',
      content:
        '<compacted_history>\nEarlier, things happened.\n</compacted_history>\n\nThe block above summarizes earlier parts of this story, which are no longer shown in full.',
    });
  });

  it('the turn context is not at the end of the request: the current turn and post-history come after it', async () => {
    const ctx = await buildContext(params({ segments: [segment('mem', { volatility: 'turn' })] }));
    expect(ctx.messages.at(-1)).toEqual({ role: 'user', content: 'go north' });
    expect(ctx.messages.at(-2)).toEqual({ role: 'system', content: '<mem/>' });
  });

  it('an empty turn context adds no message and turnContext is ""', async () => {
    const ctx = await buildContext(params());
    expect(ctx.turnContext).toBe('');
    expect(ctx.messages.filter((m) => m.role === 'system')).toEqual([]);
    expect(ctx.messages).toHaveLength(history(2).length + 1);
  });

  it('the serialized system prompt carries the sentinel only as boundaries', async () => {
    const ctx = await buildContext(params());
    expect(ctx.systemPrompt.split(CACHE_BREAK)).toHaveLength(3);
  });
});
