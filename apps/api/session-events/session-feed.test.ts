import type { MessageEvent } from '@nestjs/common';
import { InProcessDeltaBus, type StoryDelta } from '../../../libs/engine';
import type { LogEntry, StoredEvent } from '../../../libs/events';
import { parseEventId } from './event-id';
import { SessionFeed } from './session-feed';

const S = 'session-1';
const E = 'exec-1';
const base = { executionId: E, turnId: 'turn-1' };
const narrator = { pluginId: 'story', runtimeId: 'narrator' };
const other = { pluginId: 'side', runtimeId: 'watcher' };

function event(position: number, type: string, data: Record<string, unknown>): StoredEvent {
  return { globalPosition: position, tenantId: 't', streamId: S, streamVersion: position, type, data, metadata: {}, recordedAt: '' } as unknown as StoredEvent;
}

/** A session whose narrator call (3) streams while another runtime's tool call (4) is recorded, then the call ends (5). */
const LOG = [
  event(1, 'player-input.submitted@1', { ...base, messageId: 'm1', text: 'Look around' }),
  event(2, 'execution.started@1', { ...base, attempt: 1, workerId: 'w' }),
  event(3, 'llm.calling@1', { ...base, ...narrator, attempt: 1, callId: 'call-a', provider: 'openai-chat', model: 'm', step: 1, body: '{}' }),
  event(4, 'tool.called@1', { ...base, ...other, attempt: 1, step: 1, toolCallId: 'tc', name: 'roll', arguments: '{}' }),
  event(5, 'llm.responded@1', {
    ...base,
    ...narrator,
    callId: 'call-a',
    finishReason: 'stop',
    usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 },
  }),
];

function harness(resume: string | undefined) {
  const log: StoredEvent[] = [];
  const sent: MessageEvent[] = [];
  const bus = new InProcessDeltaBus();
  // live deltas can be held on their way to the feed (a slow pub/sub road); the bus keeps them at once
  let held: (() => void)[] | null = null;
  const deltas = {
    recent: (callId: string) => bus.recent(callId),
    subscribe: (sessionId: string, onDelta: (d: StoryDelta) => void) => bus.subscribe(sessionId, (d) => (held ? held.push(() => onDelta(d)) : onDelta(d))),
  };
  const store = {
    readLog: (after: number, limit: number) =>
      Promise.resolve(
        log
          .filter((e) => e.globalPosition > after)
          .slice(0, limit)
          .map((e): LogEntry => ({ globalPosition: e.globalPosition, tenantId: e.tenantId, streamId: S, type: e.type, decode: () => e })),
      ),
  };
  const feed = new SessionFeed({
    store,
    deltas,
    appends: { subscribe: () => Promise.resolve(() => undefined) }, // the short safety poll reads what the test appends
    sessionId: S,
    resume: parseEventId(resume),
    send: (m) => sent.push(m),
    pollIntervalMs: 2,
    heartbeatMs: 60_000,
    onError: (e) => {
      throw e;
    },
  });
  const running = feed.run();
  const settle = async (count: number) => {
    while (sent.filter((m) => m.id).length < count) await new Promise((r) => setTimeout(r, 2));
    await new Promise((r) => setTimeout(r, 20)); // nothing more arrives (the assertion is on order, not on time)
  };
  const holdLive = () => (held = []);
  const releaseLive = () => {
    for (const deliver of held?.splice(0) ?? []) deliver();
    held = null;
  };
  return { log, sent, bus, settle, holdLive, releaseLive, stop: () => (feed.stop(), running) };
}

const delta = (seq: number) => ({ sessionId: S, callId: 'call-a', seq, text: `w${seq} ` });
const idsOf = (sent: MessageEvent[]) => sent.filter((m) => m.id).map((m) => m.id);

describe('SessionFeed', () => {
  it("splices a call's deltas after its event and holds the log behind it until the call ends", async () => {
    const h = harness(undefined);
    h.log.push(...LOG.slice(0, 4)); // the other runtime's event 4 is in the log while the narrator streams
    h.bus.publish(delta(1));
    await h.settle(4);
    h.bus.publish(delta(2));
    await h.settle(5);
    expect(idsOf(h.sent)).toEqual(['1', '2', '3', '3-1', '3-2']);
    h.log.push(LOG[4]);
    await h.settle(7);
    h.bus.publish(delta(3)); // after the call's end was read: dropped (its text is in the reply)
    await h.settle(7);
    expect(idsOf(h.sent)).toEqual(['1', '2', '3', '3-1', '3-2', '4', '5']);
    expect(h.sent.find((m) => m.id === '3-2')).toMatchObject({ type: 'delta', data: { callId: 'call-a', seq: 2, text: 'w2 ' } });
    await h.stop();
  });

  it("a delta published before the call's end was recorded but heard after the feed read that end is sent before it (the bus kept it)", async () => {
    const h = harness(undefined);
    h.log.push(...LOG.slice(0, 4));
    h.bus.publish(delta(1));
    await h.settle(4);
    h.holdLive(); // pub/sub slower than the log: deltas 2 and 3 reach the feed only after the reply is read
    h.bus.publish(delta(2));
    h.bus.publish(delta(3));
    h.log.push(LOG[4]);
    await h.settle(6); // event 4 and the call's end: 6 without the kept deltas (all 8 go at once with them)
    h.releaseLive(); // heard late, once: not sent again
    await h.settle(6);
    expect(idsOf(h.sent)).toEqual(['1', '2', '3', '3-1', '3-2', '3-3', '4', '5']);
    await h.stop();
  });

  it('resumed from a delta id: the rest of that call from the bus, then the held log, each once', async () => {
    const h = harness('3-1');
    h.log.push(...LOG.slice(0, 4));
    h.bus.publish(delta(1));
    h.bus.publish(delta(2));
    await h.settle(1);
    h.bus.publish(delta(3));
    await h.settle(2);
    expect(idsOf(h.sent)).toEqual(['3-2', '3-3']);
    h.log.push(LOG[4]);
    await h.settle(4);
    expect(idsOf(h.sent)).toEqual(['3-2', '3-3', '4', '5']);
    await h.stop();
  });

  it('resumed from a delta id of a call that has ended since: the rest of its kept deltas, then its end, each once', async () => {
    const h = harness('3-1');
    for (const seq of [1, 2, 3]) h.bus.publish(delta(seq));
    h.log.push(...LOG); // the call ended before the resumed stream read the log
    await h.settle(2);
    expect(idsOf(h.sent)).toEqual(['3-2', '3-3', '4', '5']);
    await h.stop();
  });

  it('resumed from a log id: only what comes after it; an ended call sends no deltas', async () => {
    const h = harness('2');
    h.log.push(...LOG);
    h.bus.publish(delta(1));
    await h.settle(3);
    expect(idsOf(h.sent)).toEqual(['3', '4', '5']);
    await h.stop();
  });
});
