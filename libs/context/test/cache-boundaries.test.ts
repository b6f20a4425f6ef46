import { buildContext, CACHE_BREAK, serializeSystemPrompt, splitAtCacheBreaks, stripCacheBreaks, type SystemSection } from '..';
import { params, segment } from './fixtures';

const all: SystemSection[] = [
  { name: 'preamble', text: 'P' },
  { name: 'runtime-body', text: 'B' },
  { name: 'segments', text: 'S' },
  { name: 'worldinfo-before', text: 'W1' },
  { name: 'events-activation', text: 'E' },
  { name: 'worldinfo-after', text: 'W2' },
  { name: 'turn-segments', text: 'T' },
];

describe('§5 Cache boundaries in the system prompt', () => {
  it('the sentinel is the private-use U+E000', () => {
    expect(CACHE_BREAK).toBe('\uE000');
  });

  it('after preamble, runtime body, stable/session segments and after-plugin lorebook: at most four', () => {
    const s = serializeSystemPrompt(all, true);
    expect(s).toBe(`P${CACHE_BREAK}\n\nB${CACHE_BREAK}\n\nS${CACHE_BREAK}\n\nW1\n\nE\n\nW2${CACHE_BREAK}\n\nT`);
    expect(s.split(CACHE_BREAK)).toHaveLength(5);
  });

  it('empty sections set no boundary', () => {
    const s = serializeSystemPrompt(
      all.map((x) => (x.name === 'segments' || x.name === 'worldinfo-after' ? { ...x, text: '  ' } : x)),
      true,
    );
    expect(s).toBe(`P${CACHE_BREAK}\n\nB${CACHE_BREAK}\n\nW1\n\nE\n\nT`);
  });

  it('without boundaries, and stripped, it is the same text', () => {
    expect(stripCacheBreaks(serializeSystemPrompt(all, true))).toBe(serializeSystemPrompt(all, false));
    expect(splitAtCacheBreaks(serializeSystemPrompt(all, true))).toHaveLength(5);
  });

  it('a turn segment that stays in the system prompt goes after the last boundary and sets none', async () => {
    const ctx = await buildContext(params({ segments: [segment('turn-pre', { position: 'pre-history', volatility: 'turn' }), segment('stable')] }));
    const parts = ctx.systemPrompt.split(CACHE_BREAK);
    expect(parts.at(-1)).toBe('\n\n<turn-pre/>');
    expect(parts.slice(0, -1).join('')).not.toContain('turn-pre');
  });

  it('a position: system turn segment is not in the system prompt at all', async () => {
    const ctx = await buildContext(params({ segments: [segment('turn-sys', { volatility: 'turn' })] }));
    expect(ctx.systemPrompt).not.toContain('turn-sys');
    expect(ctx.turnContext).toBe('<turn-sys/>');
  });
});
