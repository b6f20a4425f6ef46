import { DEFAULT_PRICES, estimateCostUsd, parseLlmConfig, PriceTable, SlotConfigError, sumCostUsd } from '..';
import { capabilitiesOf } from '../model-table';

const SLOTS = `
[slots.story]
protocol = "openai-chat"
model = "gpt-4.1-mini"
contextWindow = 128000
maxOutputTokens = 1024
[slots.fast]
protocol = "openai-chat"
model = "gpt-4.1-nano"
contextWindow = 128000
maxOutputTokens = 512
`;

describe('llm.toml [prices]', () => {
  it('parses a price per model, its date given as a string or a bare TOML date', () => {
    const config = parseLlmConfig(`${SLOTS}
[prices."house-model"]
input = 1.5
cachedInput = 0.15
output = 6
asOf = 2026-11-30
source = "our contract"
[prices."gpt-4.1-mini"]
input = 0.5
cachedInput = 0.2
output = 2
asOf = "2026-12-01"
`);
    expect(config.prices).toEqual({
      'house-model': { input: 1.5, cachedInput: 0.15, output: 6, asOf: '2026-11-30', source: 'our contract' },
      'gpt-4.1-mini': { input: 0.5, cachedInput: 0.2, output: 2, asOf: '2026-12-01' },
    });
  });

  it('extends and overrides the built-in table: an entry replaces the built-in one whole', () => {
    const table = new PriceTable(
      parseLlmConfig(`${SLOTS}
[prices."gpt-4.1-mini"]
input = 0.5
cachedInput = 0.2
output = 2
asOf = "2026-12-01"
[prices."house-model"]
input = 1
cachedInput = 1
output = 1
asOf = "2026-12-01"
`).prices,
    );
    expect(table.priceOf('gpt-4.1-mini')).toEqual({ input: 0.5, cachedInput: 0.2, output: 2, asOf: '2026-12-01' });
    expect(table.priceOf('house-model')?.output).toBe(1);
    // untouched built-ins stay
    expect(table.priceOf('gpt-4.1-nano')).toEqual(DEFAULT_PRICES['gpt-4.1-nano']);
    // without [prices], the built-ins
    expect(new PriceTable(parseLlmConfig(SLOTS).prices).priceOf('gpt-4.1-mini')).toEqual(DEFAULT_PRICES['gpt-4.1-mini']);
  });

  it('a dated snapshot id takes its model’s price; an unknown model has none', () => {
    const table = new PriceTable();
    expect(table.priceOf('gpt-4.1-mini-2025-04-14')).toBe(DEFAULT_PRICES['gpt-4.1-mini']);
    expect(table.priceOf('claude-sonnet-4-5-20250929')).toBe(DEFAULT_PRICES['claude-sonnet-4-5']);
    expect(table.priceOf('story-model')).toBeNull();
  });

  it.each([
    ['a negative price', 'input = -1\ncachedInput = 0\noutput = 1\nasOf = "2026-12-01"', /prices\."gpt-4\.1-mini"\.input: /],
    ['a price that is text', 'input = 1\ncachedInput = "cheap"\noutput = 1\nasOf = "2026-12-01"', /prices\."gpt-4\.1-mini"\.cachedInput: /],
    ['a missing output price', 'input = 1\ncachedInput = 0.1\nasOf = "2026-12-01"', /prices\."gpt-4\.1-mini"\.output: /],
    ['a date that is not one', 'input = 1\ncachedInput = 0.1\noutput = 1\nasOf = "last week"', /prices\."gpt-4\.1-mini"\.asOf: a date, YYYY-MM-DD/],
    ['a missing date', 'input = 1\ncachedInput = 0.1\noutput = 1', /prices\."gpt-4\.1-mini"\.asOf: /],
    ['a misspelt key', 'input = 1\ncachedInput = 0.1\nouptut = 1\noutput = 1\nasOf = "2026-12-01"', /prices\."gpt-4\.1-mini"\.ouptut: unknown key/],
    ['infinity', 'input = inf\ncachedInput = 0.1\noutput = 1\nasOf = "2026-12-01"', /prices\."gpt-4\.1-mini"\.input: /],
  ])('%s stops the load, naming the key path', (_what, entry, message) => {
    const text = `${SLOTS}\n[prices."gpt-4.1-mini"]\n${entry}\n`;
    expect(() => parseLlmConfig(text)).toThrow(SlotConfigError);
    expect(() => parseLlmConfig(text)).toThrow(message);
  });

  it('every built-in price is valid and dated, with its source', () => {
    for (const [model, price] of Object.entries(DEFAULT_PRICES)) {
      expect([
        model,
        parseLlmConfig(
          `${SLOTS}\n[prices."${model}"]\ninput = ${price.input}\ncachedInput = ${price.cachedInput}\noutput = ${price.output}\nasOf = "${price.asOf}"\n`,
        ).prices?.[model]?.asOf,
      ]).toEqual([model, price.asOf]);
      expect([model, price.source]).toEqual([model, expect.any(String)]);
      expect(price.cachedInput).toBeLessThanOrEqual(price.input);
    }
  });

  it('the built-in table prices a model of every family of the model table', () => {
    const families = new Set(Object.keys(DEFAULT_PRICES).map((m) => capabilitiesOf(m).family));
    expect([...families].sort()).toEqual(['anthropic', 'deepseek', 'gemini', 'openai', 'qwen']);
    // the default slots of llm.toml and the models the tests and bench play
    for (const model of ['gpt-4.1-mini', 'gpt-4.1-nano', 'claude-sonnet-4-5', 'gemini-2.5-flash'])
      expect([model, new PriceTable().priceOf(model)]).toEqual([model, expect.objectContaining({ asOf: expect.any(String) })]);
  });
});

describe('estimateCostUsd', () => {
  const price = { input: 0.4, cachedInput: 0.1, output: 1.6, asOf: '2026-12-01' };

  it('prices cached input as cached, the rest of the input as input, output as output', () => {
    // 10,000 input of which 6,000 cached, 500 output: 4,000 × 0.4 + 6,000 × 0.1 + 500 × 1.6 = 1,600 + 600 + 800 = 3,000 µ$
    expect(estimateCostUsd({ inputTokens: 10_000, cachedInputTokens: 6_000, outputTokens: 500 }, price)).toBe(0.003);
    // nothing cached: 1,000,000 × 0.4 + 1,000,000 × 1.6
    expect(estimateCostUsd({ inputTokens: 1_000_000, cachedInputTokens: 0, outputTokens: 1_000_000 }, price)).toBe(2);
    // all cached
    expect(estimateCostUsd({ inputTokens: 3_000, cachedInputTokens: 3_000, outputTokens: 0 }, price)).toBe(0.0003);
    // decimal figures read as decimals (no 0.30000000000000004)
    expect(estimateCostUsd({ inputTokens: 1, cachedInputTokens: 0, outputTokens: 1 }, { ...price, input: 0.1, output: 0.2 })).toBe(0.0000003);
    expect(estimateCostUsd({ inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 }, price)).toBe(0);
  });

  it('is null when the model has no price', () => {
    expect(estimateCostUsd({ inputTokens: 10, cachedInputTokens: 0, outputTokens: 1 }, null)).toBeNull();
  });

  it('never prices more cached tokens than input ones', () => {
    expect(estimateCostUsd({ inputTokens: 100, cachedInputTokens: 250, outputTokens: 0 }, price)).toBe(0.00001);
  });

  it('sums: null when one is unknown, 0 for none', () => {
    expect(sumCostUsd([0.1, 0.2])).toBe(0.3);
    expect(sumCostUsd([0.1, null, 0.2])).toBeNull();
    expect(sumCostUsd([])).toBe(0);
  });
});
