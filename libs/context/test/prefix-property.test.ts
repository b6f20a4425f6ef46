import fc from 'fast-check';
import { buildContext, type BuildContextParams, type HistoryMessage, type HistorySummary } from '..';
import { narrator, segment } from './fixtures';

/** What the provider hashes for its cache key, in order: the system prompt, then each message. */
const serialize = (systemPrompt: string, messages: readonly { role: string; content: string }[]) =>
  [JSON.stringify({ role: 'system', content: systemPrompt }), ...messages.map((m) => JSON.stringify({ role: m.role, content: m.content }))].join(',');

const turnData = fc.record({
  mood: fc.string({ maxLength: 30 }),
  hp: fc.integer({ min: 0, max: 100 }),
  scene: fc.string({ maxLength: 60 }),
});

describe('§2/§5 property: the cacheable prefix grows, never breaks', () => {
  it("over 30 turns where only turn data changes, request N+1 starts with turn N's system prompt and history", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(turnData, { minLength: 30, maxLength: 30 }),
        fc.array(fc.integer({ min: 0, max: 29 }), { maxLength: 2 }),
        async (turns, compactAt) => {
          let history: HistoryMessage[] = [];
          let summaries: HistorySummary[] = [];
          let previous: { prefix: string } | null = null;
          for (let n = 0; n < turns.length; n++) {
            const compacted = compactAt.includes(n) && history.length > 4;
            if (compacted) {
              summaries = [...summaries, { id: `s${n}`, content: `summary up to ${n}`, messageIds: history.slice(0, 4).map((m) => m.messageId) }];
              history = history.slice(4);
            }
            const d = turns[n];
            const params: BuildContextParams = {
              locale: 'en',
              runtime: narrator,
              history,
              summaries,
              playerInput: { messageId: `u${n}`, text: `input ${n}` },
              activation: { kind: 'stage', stage: 'narrative' },
              segments: [
                segment('rules', { volatility: 'stable', content: '<rules>Be kind.</rules>' }),
                segment('cast', { volatility: 'session', content: '<cast>Mira</cast>' }),
                segment('memory', { volatility: 'turn', content: `<memory>${d.mood}</memory>` }),
              ],
              selfData: [
                { namespace: 'status', rows: [{ key: 'hp', value: d.hp }], totalRows: 1 },
                { namespace: 'scene', rows: [{ key: 'now', value: d.scene }], totalRows: 1 },
              ],
              lorebook: [{ id: 'ember', content: 'Emberback is a sleeping dragon.', position: 'after-plugin', order: 0, reason: { kind: 'constant' } }],
            };
            const ctx = await buildContext(params);
            const request = serialize(ctx.systemPrompt, ctx.messages);
            if (previous && !compacted) expect(request.startsWith(previous.prefix)).toBe(true);
            // this turn's cacheable prefix: system prompt + everything before the turn context
            const historyEnd = ctx.messageSections.indexOf('turn-context');
            previous = { prefix: serialize(ctx.systemPrompt, ctx.messages.slice(0, historyEnd)) };
            history = [
              ...history,
              {
                messageId: `u${n}`,
                turnId: `t${n}`,
                role: 'user',
                sourceType: 'player',
                pluginId: null,
                runtimeId: null,
                outputKind: null,
                text: `input ${n}`,
              },
              {
                messageId: `a${n}`,
                turnId: `t${n}`,
                role: 'assistant',
                sourceType: 'runtime',
                pluginId: 'narrator',
                runtimeId: 'narrator',
                outputKind: 'story',
                text: `story ${n}`,
              },
            ];
          }
        },
      ),
      { numRuns: 25 },
    );
  });
});
