import { keepHistory, keptHistory } from '../history-handoff';
import type { LoadedHistory } from '../history-loader';

const history = (text: string): LoadedHistory => ({
  messages: [{ messageId: 'm1', turnId: 't1', role: 'user', sourceType: 'player', pluginId: null, runtimeId: null, outputKind: null, text }],
  summaries: [],
  scanTail: [{ text }],
  stats: { total: 1, compacted: 0, uncompacted: 1, turns: 1 },
  images: [],
});

describe('the history a barrier hands to the runtime jobs of its process', () => {
  const ref = { tenantId: 'tenant', sessionId: 'session', executionId: 'e1', streamVersion: 7 };

  it('is taken only at the stream version it was read at, by the same execution', () => {
    const kept = history('one');
    keepHistory(ref, kept);
    expect(keptHistory(ref)).toBe(kept);
    expect(keptHistory({ ...ref, streamVersion: 8 })).toBeUndefined(); // the session moved: read anew
    expect(keptHistory({ ...ref, executionId: 'e2' })).toBeUndefined();
    expect(keptHistory({ ...ref, tenantId: 'other' })).toBeUndefined();
  });

  it('keeps one entry per session: a later read replaces the earlier one', () => {
    keepHistory(ref, history('one'));
    const later = history('two');
    keepHistory({ ...ref, executionId: 'e2', streamVersion: 9 }, later);
    expect(keptHistory(ref)).toBeUndefined();
    expect(keptHistory({ ...ref, executionId: 'e2', streamVersion: 9 })).toBe(later);
  });

  it('is bounded: the oldest sessions are dropped', () => {
    const first = { ...ref, sessionId: 's0' };
    keepHistory(first, history('first'));
    for (let i = 1; i <= 100; i++) keepHistory({ ...ref, sessionId: `s${i}` }, history(String(i)));
    expect(keptHistory(first)).toBeUndefined();
    expect(keptHistory({ ...ref, sessionId: 's100' })).toBeDefined();
  });
});
