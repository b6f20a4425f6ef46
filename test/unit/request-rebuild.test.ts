import { join } from 'node:path';
import { rebuildRequests } from '../../libs/engine';
import { startEmbedded } from '../support/embedded';

describe('the assembled context of a committed call is rebuilt from the event log alone', () => {
  it('10 turns: every recorded llm.calling body is byte-identical to its rebuild', async () => {
    const covel = await startEmbedded({ COVEL_PLUGINS_DIR: join(__dirname, '..', 'fixtures', 'audit-plugins') });
    try {
      const client = await covel.newTenant();
      const { id } = await client.createSession({ locale: 'zh-Hans' });
      const compact = async (summaryId: string, count: number, replaces: string[] = []) => {
        // what the compaction step appends: summaries and markers in one event
        const messages = await covel.engine.readModels.recentMessages((await covel.engine.store.readStream(id, 0, 1))[0].tenantId, id, 1000);
        await covel.engine.store.append({
          tenantId: (await covel.engine.store.readStream(id, 0, 1))[0].tenantId,
          streamId: id,
          expectedVersion: await covel.engine.store.streamVersion(id),
          events: [
            {
              type: 'history.compacted@1',
              data: {
                compactionId: summaryId,
                summaries: [
                  { summaryId, messageIds: messages.slice(0, count).map((m) => m.messageId), replacesSummaryIds: replaces, content: `摘要 ${summaryId}` },
                ],
              },
            },
          ],
        });
      };
      for (let t = 0; t < 10; t++) {
        if (t === 4) await compact('s1', 4);
        if (t === 7) await compact('s2', 2, ['s1']);
        await client.waitFor((await client.submit(id, `第 ${t} 步：向前走`)).executionId, 20_000);
      }
      const events = await covel.engine.store.readStream(id);
      const rebuilt = await rebuildRequests(events, covel.engine.catalog, covel.engine.providers, covel.engine.worlds, {
        historyReadLimit: covel.engine.turns!.historyReadLimit,
      });
      expect(rebuilt).toHaveLength(20);
      expect(rebuilt.filter((c) => !c.identical)).toEqual([]);
      // one turn's calls (an audit's): only they are re-derived, as they are among all of them
      const turnId = rebuilt[11].turnId;
      const seen: string[] = [];
      const oneTurn = await rebuildRequests(events, covel.engine.catalog, covel.engine.providers, covel.engine.worlds, {
        historyReadLimit: covel.engine.turns!.historyReadLimit,
        turnId,
        inspect: (call) => seen.push(call.turnId),
      });
      expect(oneTurn).toEqual(rebuilt.filter((c) => c.turnId === turnId));
      expect(oneTurn).toHaveLength(2);
      expect(seen).toEqual([turnId, turnId]);
      // the tracker after the narrative saw this turn's story text; the narrator saw the whole history
      const lastTracker = JSON.parse(rebuilt.at(-1)!.rebuilt) as { messages: { role: string; content: string }[] };
      expect(rebuilt.at(-1)!.pluginId).toBe('tracker');
      // window of one turn (its own structured output included), then input, story text, ending hint
      expect(lastTracker.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'assistant', 'user', 'assistant', 'user']);
      expect(lastTracker.messages[0].content).toContain('<tracker-rules>');
      const lastNarrator = JSON.parse(rebuilt.at(-2)!.rebuilt) as { messages: unknown[] };
      // 4 + 2 rows compacted (turns 0-1: inputs, stories, tracker rows) into one merged summary
      // envelope that keeps the oldest id; the narrator sees the other 14 of its 18 history rows
      expect(lastNarrator.messages).toHaveLength(1 + 1 + 14 + 1);
      expect(JSON.stringify(lastNarrator.messages[1])).toContain('<compacted_history>');
      expect(JSON.stringify(lastNarrator.messages[1])).toContain('摘要 s2');
      expect(await covel.engine.readModels.summaries(events[0].tenantId, id)).toEqual([expect.objectContaining({ id: 's1', content: '摘要 s2' })]);
      expect((await covel.engine.readModels.summaries(events[0].tenantId, id, { withMessageIds: true }))[0].messageIds).toHaveLength(6);
      // and the rebuild is sensitive: a different history would not match
      const tampered = events.map((e) =>
        e.type === 'turn.committed@1' && e.streamVersion === events.find((x) => x.type === 'turn.committed@1')!.streamVersion
          ? { ...e, data: { ...e.data, messages: e.data.messages.map((m) => ({ ...m, text: m.text + '!' })) } }
          : e,
      );
      const off = await rebuildRequests(tampered, covel.engine.catalog, covel.engine.providers, covel.engine.worlds, { historyReadLimit: 400 });
      expect(off.filter((c) => !c.identical).length).toBeGreaterThan(0);
    } finally {
      await covel.stop();
    }
  }, 60_000);
});
