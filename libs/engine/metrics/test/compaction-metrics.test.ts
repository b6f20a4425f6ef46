import type { AppendResult, StoredEvent } from '../../../events';
import type { TurnHarness } from '../../turn/test/harness';
import { playTurn, smallWindowHarness } from '../../barrier/test/long-session';
import { EngineMetrics } from '..';
import { parseExposition, total } from '../../../../test/support/prometheus-text';

const scrape = async (metrics: EngineMetrics) => parseExposition((await metrics.exposition()).body);

describe('metrics of the compaction barrier (summary model on an 8k window)', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await smallWindowHarness();
  });
  afterAll(() => h.close());

  it("times the summary model's calls with the agents' and counts its tokens under <plugin>/(compaction)", async () => {
    const metrics = new EngineMetrics();
    h.deps.metrics = metrics;
    const session = await h.session();
    let events: StoredEvent[] = [];
    for (let i = 1; i <= 16 && !events.some((e) => e.type === 'compaction.summary-responded@1'); i++) {
      await playTurn(h, session, `Turn ${i}: ${'I search the flooded archive shelf by shelf, reading every spine aloud. '.repeat(40)}`);
      events = await h.events(session.sessionId);
    }
    const requested = events.filter((e) => e.type === 'compaction.summary-requested@1');
    const responded = events.filter((e) => e.type === 'compaction.summary-responded@1');
    expect(responded.length).toBeGreaterThan(0);
    // every answered call, the summary model's included, is one observation
    const answered = events.filter((e) => e.type === 'llm.responded@1').length + responded.length;
    expect(total(await scrape(metrics), 'covel_model_call_duration_seconds_count')).toBe(answered);

    // the log's events as the store hands them over: compaction usage under its plugin
    metrics.onAppended({ version: 0, firstPosition: 0, lastPosition: 0, events } as AppendResult);
    const plugin = requested[0].type === 'compaction.summary-requested@1' ? requested[0].data.pluginId : '';
    const input = responded.reduce((n, e) => n + (e.type === 'compaction.summary-responded@1' ? e.data.usage.inputTokens : 0), 0);
    expect(input).toBeGreaterThan(0);
    expect(total(await scrape(metrics), 'covel_model_input_tokens_total', { runtime: `${plugin}/(compaction)` })).toBe(input);
  }, 180_000);
});
