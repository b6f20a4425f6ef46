import { buildContext, compareSegments, matchesAudience, placementOf, stripCacheBreaks } from '..';
import { narrator, params, segment, tracker } from './fixtures';

describe('§2 Extension segments: placement table', () => {
  it.each([
    [{ position: 'system', volatility: 'stable', role: 'system' }, 'system-prompt'],
    [{ position: 'system', volatility: 'session', role: 'system' }, 'system-prompt'],
    [{ position: 'pre-history', volatility: 'session', role: 'system' }, 'system-prompt'],
    [{ position: 'pre-history', volatility: 'turn', role: 'system' }, 'system-prompt-turn'],
    [{ position: 'system', volatility: 'turn', role: 'system' }, 'turn-context'],
    [{ position: 'pre-history', volatility: 'stable', role: 'user' }, 'pre-history-messages'],
    [{ position: 'pre-history', volatility: 'turn', role: 'assistant' }, 'pre-history-messages'],
    [{ position: 'post-history', volatility: 'stable', role: 'user' }, 'post-history'],
    [{ position: { depth: 2 }, volatility: 'stable', role: 'system' }, 'depth'],
  ] as const)('%j → %s', (decl, placement) => {
    expect(placementOf(segment('s', decl as never))).toBe(placement);
  });

  it('pre-history user/assistant segments are messages before the history, in sort order', async () => {
    const ctx = await buildContext(
      params({
        segments: [
          segment('b', { position: 'pre-history', role: 'assistant', order: 1 }),
          segment('a', { position: 'pre-history', role: 'user', order: 1 }),
          segment('z', { position: 'pre-history', role: 'user', order: 0 }),
        ],
      }),
    );
    expect(ctx.messages.slice(0, 3)).toEqual([
      { role: 'user', content: '<z/>' },
      { role: 'user', content: '<a/>' },
      { role: 'assistant', content: '<b/>' },
    ]);
  });

  it('{ depth: n } counts conversation messages only: the turn context takes no position', async () => {
    const ctx = await buildContext(
      params({
        segments: [
          segment('mem', { volatility: 'turn' }),
          segment('d1', { position: { depth: 1 }, role: 'user' }),
          segment('d3', { position: { depth: 3 }, role: 'user' }),
        ],
      }),
    );
    // conversation: input1 story1 input2 story2 now → d3 before "story 1"... counted from the end
    expect(ctx.messages.map((m) => m.content)).toEqual(['input 1', 'story 1', '<d3/>', 'input 2', 'story 2', '<d1/>', '<mem/>', 'go north']);
  });

  it('depth larger than the conversation goes to the front; depth 0 after the last message', async () => {
    const ctx = await buildContext(
      params({ history: [], segments: [segment('far', { position: { depth: 99 }, role: 'user' }), segment('zero', { position: { depth: 0 }, role: 'user' })] }),
    );
    expect(ctx.messages.map((m) => m.content)).toEqual(['<far/>', 'go north', '<zero/>']);
  });
});

describe('§2 Extension segments: audience and sort', () => {
  it('self covers all runtimes of the providing plugin; story matches story runtimes; contract matches the output contract', () => {
    expect(matchesAudience(segment('s', { audience: 'self', providerPluginId: 'narrator' }), narrator)).toBe(true);
    expect(matchesAudience(segment('s', { audience: 'self', providerPluginId: 'narrator' }), tracker)).toBe(false);
    expect(matchesAudience(segment('s', { audience: 'story' }), narrator)).toBe(true);
    expect(matchesAudience(segment('s', { audience: 'story' }), tracker)).toBe(false);
    expect(matchesAudience(segment('s', { audience: { contract: 'narrative-engine@2' } }), narrator)).toBe(true);
    expect(matchesAudience(segment('s', { audience: { contract: 'narrative-engine@1' } }), narrator)).toBe(false);
    expect(matchesAudience(segment('s', { audience: undefined }), tracker)).toBe(true);
  });

  it('filtered segments do not appear', async () => {
    const ctx = await buildContext(params({ runtime: tracker, segments: [segment('story-only', { audience: 'story' })] }));
    expect(stripCacheBreaks(ctx.systemPrompt)).not.toContain('story-only');
  });

  it('sort: volatility (stable, session, turn), then order, provider plugin id, segment id', () => {
    const list = [
      segment('t', { volatility: 'turn', order: -5 }),
      segment('s2', { volatility: 'session', order: 1 }),
      segment('b', { providerPluginId: 'b-plugin' }),
      segment('a2', { providerPluginId: 'a-plugin' }),
      segment('a1', { providerPluginId: 'a-plugin' }),
      segment('s1', { volatility: 'session', order: 0 }),
    ];
    expect([...list].sort(compareSegments).map((s) => s.id)).toEqual(['a1', 'a2', 'b', 's1', 's2', 't']);
  });
});
