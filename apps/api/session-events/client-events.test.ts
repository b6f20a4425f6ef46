import type { StoredEvent } from '../../../libs/events';
import { clientEvent, TOOL_SUMMARY_MAX } from './client-events';
import { isWellFormedText } from '../../../libs/text';

const completed = (data: Record<string, unknown>) =>
  ({
    globalPosition: 1,
    tenantId: 't',
    streamId: 's',
    streamVersion: 1,
    type: 'tool.completed@1',
    data: {
      executionId: 'e',
      turnId: 't1',
      attempt: 1,
      pluginId: 'world-init',
      runtimeId: 'dimension-tracker',
      step: 1,
      toolCallId: 'c',
      name: 'update',
      ...data,
    },
    metadata: {},
    recordedAt: '',
  }) as unknown as StoredEvent;

describe('clientEvent: a completed tool call carries its summary for clients to show', () => {
  it("a plugin tool's data.summary (or the envelope's summary) is carried; a failed call, plain text or no summary carries none", () => {
    const summaryOf = (data: Record<string, unknown>) => clientEvent(completed(data))!.data.summary;
    expect(summaryOf({ ok: true, content: JSON.stringify({ ok: true, data: { summary: "Dragon's sleep 8 → 7" } }) })).toBe("Dragon's sleep 8 → 7");
    expect(summaryOf({ ok: true, content: JSON.stringify({ ok: true, summary: 'noted', data: {} }) })).toBe('noted');
    expect(summaryOf({ ok: true, content: JSON.stringify({ ok: true, data: { updated: 1 } }) })).toBeUndefined();
    expect(summaryOf({ ok: true, content: 'plain text' })).toBeUndefined();
    expect(
      summaryOf({ ok: false, errorCode: 'INVALID_ARGUMENTS', content: JSON.stringify({ ok: false, summary: 'x', error: { code: 'INVALID_ARGUMENTS' } }) }),
    ).toBeUndefined();
  });

  it('a long summary is cut by code points, never inside a surrogate pair', () => {
    const long = '🐉'.repeat(TOOL_SUMMARY_MAX + 50);
    const summary = clientEvent(completed({ ok: true, content: JSON.stringify({ ok: true, data: { summary: long } }) }))!.data.summary as string;
    expect(Array.from(summary).length).toBeLessThanOrEqual(TOOL_SUMMARY_MAX);
    expect(isWellFormedText(summary)).toBe(true);
    expect(summary.startsWith('🐉🐉')).toBe(true);
  });
});

describe('clientEvent: undo and edit reach the stream', () => {
  const logged = (type: string, data: Record<string, unknown>) =>
    ({ globalPosition: 9, tenantId: 't', streamId: 's', streamVersion: 9, type, data, metadata: {}, recordedAt: '' }) as unknown as StoredEvent;

  it('turn.reverted@1 is `reverted` with the turns and executions that left the history and who reverted', () => {
    const data = { turnId: 't2', turnIds: ['t2', 't3'], executionIds: ['e2', 'e3', 'e3b'], by: 'tenant:a' };
    expect(clientEvent(logged('turn.reverted@1', data))).toEqual({ type: 'reverted', data });
  });

  it('message.edited@1 is `edited` with the new text as recorded', () => {
    const data = { messageId: 'm1', turnId: 't1', text: '👩‍👩‍👧 你好 שלום', by: 'tenant:a' };
    expect(clientEvent(logged('message.edited@1', data))).toEqual({ type: 'edited', data });
  });
});
