import { HistoryTooLongError, historyFix, historyUse, historyWarningFrom } from '..';

describe('a session history use against the limit', () => {
  it('ok below 80 % of the limit, warning from 80 % up to the limit itself, full past it', () => {
    const states = (limit: number) => Array.from({ length: limit + 2 }, (_, messages) => historyUse({ messages, limit, compaction: false }).state);
    expect(states(10)).toEqual([...Array(8).fill('ok'), 'warning', 'warning', 'warning', 'full']);
    // 80 % rounded up, in integers: 12 of 15, 1,600 of 2,000, 2 of 2, 1 of 1
    expect(historyWarningFrom(15)).toBe(12);
    expect(historyUse({ messages: 12, limit: 15, compaction: false }).state).toBe('warning');
    expect(historyUse({ messages: 11, limit: 15, compaction: false }).state).toBe('ok');
    expect(historyWarningFrom(2_000)).toBe(1_600);
    expect(states(2)).toEqual(['ok', 'ok', 'warning', 'full']);
    expect(states(1)).toEqual(['ok', 'warning', 'full']);
  });

  it('from warning on, the code and the fix: add history-compaction without a provider; see why it fails with one', () => {
    expect(historyUse({ messages: 7, limit: 10, compaction: false })).toEqual({ messages: 7, limit: 10, state: 'ok', compaction: false });
    const warning = historyUse({ messages: 8, limit: 10, compaction: false });
    expect(warning).toMatchObject({ state: 'warning', code: 'HISTORY_NEEDS_COMPACTION' });
    expect(warning.fix).toMatch(/^add `history-compaction` to the session's plugins/);
    const full = historyUse({ messages: 11, limit: 10, compaction: true });
    expect(full).toMatchObject({ state: 'full', compaction: true, code: 'HISTORY_TOO_LONG', fix: historyFix(true) });
    expect(full.fix).toMatch(/history\.compact@2 provider has not kept the history small/);
  });

  it('the turn error carries the same code and names the same fix', () => {
    const none = new HistoryTooLongError({ sessionId: 's', uncompacted: 11, bound: 10, compaction: false });
    expect(none).toMatchObject({ code: 'HISTORY_NEEDS_COMPACTION', category: 'invalid', uncompacted: 11, bound: 10 });
    expect(none.message).toBe(`session s: 11 uncompacted messages exceed the history limit of 10 (COVEL_HISTORY_MESSAGE_LIMIT); ${historyFix(false)}`);
    expect(new HistoryTooLongError({ sessionId: 's', uncompacted: 11, bound: 10, compaction: true }).code).toBe('HISTORY_TOO_LONG');
    // where the session's plugins are not known (a rebuild): the general code, both fixes named
    const unknown = new HistoryTooLongError({ sessionId: 's', uncompacted: 11, bound: 10 });
    expect(unknown.code).toBe('HISTORY_TOO_LONG');
    expect(unknown.message).toContain(historyFix(false));
    expect(unknown.message).toContain(historyFix(true));
  });
});
