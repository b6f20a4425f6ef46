import type { ModelResponse, ProviderAdapter } from '../../../providers';
import { EngineMetrics, timedAdapter } from '..';
import { parseExposition, total } from '../../../../test/support/prometheus-text';

const response: ModelResponse = { text: 'ok', toolCalls: [], finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 } };

function adapter(fails = false): ProviderAdapter & { sent: number } {
  return {
    protocol: 'openai-chat',
    sent: 0,
    buildRequest: () => ({}),
    async send() {
      this.sent++;
      if (fails) throw new Error('down');
      return response;
    },
  };
}

describe('timedAdapter', () => {
  it('is made once per metrics, adapter and model: every step of a slot times its call with the same labels', async () => {
    const metrics = new EngineMetrics();
    const inner = adapter();
    const timed = timedAdapter(metrics, inner, 'm1');
    expect(timedAdapter(metrics, inner, 'm1')).toBe(timed);
    expect(timedAdapter(metrics, inner, 'm2')).not.toBe(timed);
    expect(timedAdapter(metrics, adapter(), 'm1')).not.toBe(timed);
    expect(timedAdapter(new EngineMetrics(), inner, 'm1')).not.toBe(timed);
    // no metrics: the adapter itself
    expect(timedAdapter(undefined, inner, 'm1')).toBe(inner);

    await timed.send({});
    await timedAdapter(metrics, inner, 'm1').send({});
    await timedAdapter(metrics, inner, 'm2').send({});
    const failing = timedAdapter(metrics, adapter(true), 'm1');
    await expect(failing.send({})).rejects.toThrow('down');
    expect(inner.sent).toBe(3);
    expect(timed.buildRequest({} as never)).toEqual({});
    const scraped = parseExposition((await metrics.exposition()).body);
    expect(total(scraped, 'covel_model_call_duration_seconds_count', { provider: 'openai-chat', model: 'm1' })).toBe(2);
    expect(total(scraped, 'covel_model_call_duration_seconds_count', { provider: 'openai-chat', model: 'm2' })).toBe(1);
    expect(total(scraped, 'covel_model_call_errors_total', { provider: 'openai-chat', model: 'm1' })).toBe(1);
  });
});
