import { type BranchPoint, branchPrefixReport, formatBranchPrefixTable, type RecordedCall } from '..';

/** An OpenAI Chat request: the system prompt, then user/assistant turns. */
function call(over: Partial<RecordedCall> & { messages: string[]; position: number; turnId: string }): RecordedCall {
  const { messages, ...rest } = over;
  return {
    protocol: 'openai-chat',
    body: { model: 'm', messages: messages.map((content, i) => ({ role: i === 0 ? 'system' : i % 2 === 1 ? 'user' : 'assistant', content })) },
    sessionId: 'parent',
    pluginId: 'narrator',
    runtimeId: 'narrator',
    callId: `c${rest.position}`,
    cachedTokens: null,
    ...rest,
  };
}

const SYSTEM = 'You narrate the story of Ash the courier in Emberback. '.repeat(20);
const point: BranchPoint = { branchSessionId: 'branch', parentSessionId: 'parent', atTurnId: 't2', parentVersion: 40, position: 20 };

describe('branchPrefixReport: a branch’s first request per runtime against its parent’s at the branch point', () => {
  const parentCalls = [
    call({ turnId: 't1', position: 5, messages: [SYSTEM, 'walk'] }),
    call({ turnId: 't2', position: 15, messages: [SYSTEM, 'walk', 'story 1', 'ask'] }),
    // the turn after the branch point: its first call is the one compared (a later step of it is not)
    call({ turnId: 't3', position: 25, messages: [SYSTEM, 'walk', 'story 1', 'ask', 'story 2', 'watch'] }),
    call({ turnId: 't3', position: 26, messages: [SYSTEM, 'step 2'] }),
    call({ turnId: 't4', position: 35, messages: [SYSTEM, 'later'] }),
    // a runtime that ran only before the point
    call({ turnId: 't1', position: 6, pluginId: 'memory', runtimeId: 'recall', messages: ['memory system', 'walk'] }),
  ];

  it('same-point: the parent’s first request of the turn after atTurnId; before-branch when the runtime ran no turn after it; none: no parent request', () => {
    const branchCalls = [
      call({ sessionId: 'branch', turnId: 'b1', position: 50, messages: [SYSTEM, 'walk', 'story 1', 'ask', 'story 2', 'watch'], cachedTokens: 1024 }),
      call({ sessionId: 'branch', turnId: 'b1', position: 51, messages: [SYSTEM, 'step 2'] }),
      call({ sessionId: 'branch', turnId: 'b1', position: 52, pluginId: 'memory', runtimeId: 'recall', messages: ['memory system', 'walk', 'story 1', 'x'] }),
      call({ sessionId: 'branch', turnId: 'b1', position: 53, pluginId: 'codex', runtimeId: 'keeper', messages: ['codex'] }),
      call({ sessionId: 'branch', turnId: 'b2', position: 60, messages: [SYSTEM, 'other'] }),
    ];
    const rows = branchPrefixReport({ point, branchCalls: [...branchCalls].reverse(), parentCalls });
    expect(rows.map((r) => [r.runtime, r.branchCallId, r.against, r.parentTurnId, r.parentCallId])).toEqual([
      ['narrator/narrator', 'c50', 'same-point', 't3', 'c25'],
      ['memory/recall', 'c52', 'before-branch', 't1', 'c6'],
      ['codex/keeper', 'c53', null, null, null],
    ]);
    expect(rows[0]).toMatchObject({ sharedPercent: 100, firstDifference: null, providerCachedTokens: 1024 });
    expect(rows[1].sharedPercent).toBe(100);
    expect(rows[2]).toMatchObject({ sharedTokens: null, sharedPercent: null });

    const table = formatBranchPrefixTable(point, rows);
    expect(table).toContain('branch branch of session parent at turn t2');
    expect(table).toMatch(/narrator\/narrator\s+same-point\s+t3\s+\d+\s+\d+\s+100%\s+1024\s+\(none: prefix intact\)/);
    expect(table).toMatch(/codex\/keeper\s+-\s+-\s+\d+\s+-\s+-\s+-\s+\(no parent request\)/);
  });

  it('a branch whose request differs from the parent’s names the first difference and the share repeated', () => {
    const branchCalls = [call({ sessionId: 'branch', turnId: 'b1', position: 50, messages: [SYSTEM, 'walk', 'story 1', 'ask', 'story 2', 'run away'] })];
    const [row] = branchPrefixReport({ point, branchCalls, parentCalls });
    expect(row.firstDifference).toMatchObject({ messageIndex: 5, role: 'user', offset: 0 });
    expect(row.sharedPercent).toBeGreaterThan(90);
    expect(row.sharedPercent).toBeLessThan(100);
  });
});
