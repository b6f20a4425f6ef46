import { buildContext, type BuildContextParams, type HistoryMessage } from '../../context';
import { OpenAIChatAdapter } from '../../providers';
import { comparePrefix, formatPrefixTables, prefixReport, type RecordedCall } from '..';
import { estimateTokens } from '../../text';
import { prefixUnits } from '../prefix-units';

const chat = new OpenAIChatAdapter({ apiKey: 'k' });
const hist = (n: number): HistoryMessage[] =>
  Array.from({ length: n }, (_, i): HistoryMessage[] => [
    { messageId: `u${i}`, turnId: `t${i}`, role: 'user', sourceType: 'player', pluginId: null, runtimeId: null, outputKind: null, text: `input ${i}` },
    {
      messageId: `a${i}`,
      turnId: `t${i}`,
      role: 'assistant',
      sourceType: 'runtime',
      pluginId: 'narrator',
      runtimeId: 'narrator',
      outputKind: 'story',
      text: `story ${i}`,
    },
  ]).flat();

/** A recorded request, built the way the worker builds it. */
async function record(over: Partial<BuildContextParams> & { body?: string }, turn: number) {
  const ctx = await buildContext({
    locale: 'en',
    runtime: {
      pluginId: 'narrator',
      runtimeId: 'narrator',
      outputKind: 'story',
      body: over.body ?? 'You narrate for Ash the courier.',
      history: {},
      stageIndex: 1,
    },
    history: hist(turn),
    playerInput: { messageId: `u${turn}`, text: `input ${turn}` },
    lorebook: [{ id: 'ember', content: 'Emberback sleeps.', position: 'after-plugin', order: 0, reason: { kind: 'constant' } }],
    ...over,
  });
  const body = chat.buildRequest({
    model: 'gpt-4.1',
    messages: [{ role: 'system', content: ctx.systemPrompt }, ...ctx.messages.map((m) => ({ role: m.role, content: m.content }))],
  });
  return {
    protocol: 'openai-chat',
    body,
    layout: { systemSections: ctx.systemSections.map((s) => ({ name: s.name, length: s.text.length })), messageSections: ['system', ...ctx.messageSections] },
  };
}

describe('prefix measurement on recorded requests', () => {
  it('its token figures are the estimate of the texts themselves: the request, the shared prefix, the previous request', async () => {
    // CJK, emoji and accents in the history: the figures joined from each unit's tally are the text's
    const cjk = (n: number) => hist(n).map((m) => ({ ...m, text: `${m.text} 地図の🚀é ${'한'.repeat(m.turnId.length)}` }));
    for (const [prev, next] of [
      [await record({ history: cjk(2) }, 2), await record({ history: cjk(3) }, 3)],
      [await record({ body: 'Ash 地図' }, 1), await record({ body: 'Ash 地図の courier 🚀' }, 2)],
      [await record({}, 2), await record({}, 2)],
    ]) {
      const cmp = comparePrefix(prev, next);
      const a = prefixUnits(prev.protocol, prev.body).map((u) => u.text);
      const b = prefixUnits(next.protocol, next.body);
      expect(cmp.requestTokens).toBe(b.reduce((t, u) => t + estimateTokens(u.text), 0));
      let shared = '';
      for (const [i, u] of b.entries()) {
        if (cmp.firstDifference && (cmp.firstDifference.messageIndex ?? -1) <= (u.messageIndex ?? -1) && a[i] !== u.text) {
          shared += u.text.slice(0, cmp.firstDifference.offset);
          break;
        }
        shared += u.text;
      }
      expect(cmp.sharedTokens).toBe(estimateTokens(shared));
      const previousTotal = estimateTokens(a.join(''));
      expect(cmp.sharedPercent).toBe(previousTotal === 0 ? 100 : Math.round((Math.min(cmp.sharedTokens, previousTotal) / previousTotal) * 1000) / 10);
    }
  });

  it('an unchanged prefix: the previous request is shared in full', async () => {
    const cmp = comparePrefix(await record({}, 1), await record({}, 2));
    expect(cmp.sharedPercent).toBe(100);
    // the new request goes on where the old one ended: at the previous turn's story text
    expect(cmp.firstDifference).toMatchObject({ messageIndex: 4, role: 'assistant', offset: 0, section: 'history' });
  });

  it('a template variable with a new value: reported in the system message, runtime body, at its offset', async () => {
    const cmp = comparePrefix(
      await record({ body: 'You narrate for Ash the courier.' }, 1),
      await record({ body: 'You narrate for Ash the wounded courier.' }, 2),
    );
    const preambleLength = (await record({}, 1)).layout.systemSections[0].length;
    expect(cmp.firstDifference).toMatchObject({
      messageIndex: 0,
      role: 'system',
      section: 'runtime-body',
      offset: preambleLength + 2 + 'You narrate for Ash the '.length,
    });
    expect(cmp.sharedPercent).toBeLessThan(95);
  });

  it('a lorebook entry that changed: reported at the after-plugin WorldInfo section', async () => {
    const a = await record({}, 1);
    const b = await record(
      {
        lorebook: [
          {
            id: 'ember',
            content: 'Emberback stirs.',
            position: 'after-plugin',
            order: 0,
            reason: { kind: 'keyword', keyword: 'ember', matchedIn: 'player-input' },
          },
        ],
      },
      2,
    );
    const d = comparePrefix(a, b).firstDifference!;
    expect(d).toMatchObject({ messageIndex: 0, section: 'worldinfo-after' });
    expect(d.after.slice(d.after.indexOf('Emberback'))).toMatch(/^Emberback stirs/);
  });

  it('a pre-history turn segment that changed: reported at the turn segments, after the last boundary', async () => {
    const seg = (content: string) => [
      {
        id: 'weather',
        providerPluginId: 'narrator',
        content,
        position: 'pre-history' as const,
        volatility: 'turn' as const,
        role: 'system' as const,
        order: 0,
      },
    ];
    const d = comparePrefix(
      await record({ segments: seg('<weather>rain</weather>') }, 1),
      await record({ segments: seg('<weather>ash</weather>') }, 2),
    ).firstDifference!;
    expect(d).toMatchObject({ messageIndex: 0, role: 'system', section: 'turn-segments' });
  });

  it('a compaction: reported at message 1, the summary envelope', async () => {
    const before = await record({}, 3);
    const after = await record({ history: hist(3).slice(4), summaries: [{ id: 's1', content: 'Earlier: inputs 0 and 1.' }] }, 4);
    const d = comparePrefix(before, after).firstDifference!;
    expect(d).toMatchObject({ messageIndex: 1, role: 'user', offset: 0, section: 'summary' });
  });

  it('the report takes the first request of each turn per runtime and formats one table per session', async () => {
    const calls: RecordedCall[] = [];
    for (let t = 0; t < 3; t++) {
      const r = await record({}, t);
      calls.push({
        ...r,
        sessionId: 's',
        turnId: `t${t}`,
        pluginId: 'narrator',
        runtimeId: 'narrator',
        callId: `c${t}`,
        position: t * 10,
        cachedTokens: t === 0 ? 0 : 5,
      });
      calls.push({ ...r, sessionId: 's', turnId: `t${t}`, pluginId: 'narrator', runtimeId: 'narrator', callId: `c${t}-loop`, position: t * 10 + 1 }); // tool loop: not compared
    }
    const rows = prefixReport(calls);
    expect(rows.map((r) => [r.turn, r.callId, r.sharedPercent])).toEqual([
      [1, 'c0', null],
      [2, 'c1', 100],
      [3, 'c2', 100],
    ]);
    const text = formatPrefixTables(rows);
    expect(text).toMatch(/^session s\nturn\s+runtime\s+req tok\s+shared\s+shared %/);
    expect(text).toContain('estimates from characters');
  });
});
