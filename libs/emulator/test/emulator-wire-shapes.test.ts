import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AnthropicAdapter, GeminiAdapter, OpenAIChatAdapter, OpenAIResponsesAdapter, parseSse, WIRE_SHAPES, wireStreamProblems } from '../../providers';
import type { ModelCall, Protocol, ProviderAdapter } from '../../providers';
import { ProviderEmulator } from '..';
import { LONG_SYSTEM, storyTurns as story } from './long-story';

/**
 * The emulator's replies, read raw off the wire, have the shapes of the providers' references
 * (the same zod shapes the golden fixtures in libs/providers validate against): JSON and streamed,
 * text, tool calls, thinking, and with cache reads. So the emulator cannot drift from the real
 * wire formats without a failing test.
 */
const tool = {
  name: 'record_fact',
  description: 'Record one fact.',
  parameters: { type: 'object', properties: { fact: { type: 'string' } }, required: ['fact'] },
};

/** Each protocol: its adapter (which builds the request), a plain model and a thinking one. */
const protocols: [Protocol, (e: ProviderEmulator) => ProviderAdapter, string, ModelCall['overrides'] & { model: string }][] = [
  ['openai-chat', (e) => new OpenAIChatAdapter({ apiKey: 'k', baseURL: e.openAIBaseURL }), 'gpt-4.1', { model: 'deepseek-v4' }],
  [
    'openai-responses',
    (e) => new OpenAIResponsesAdapter({ apiKey: 'k', baseURL: e.openAIBaseURL }),
    'gpt-4.1',
    { model: 'gpt-5.1', reasoning: { enabled: true, effort: 'low' } },
  ],
  [
    'anthropic',
    (e) => new AnthropicAdapter({ apiKey: 'k', baseURL: e.anthropicBaseURL }),
    'claude-sonnet-4-5',
    { model: 'claude-sonnet-4-5', reasoning: { enabled: true, effort: 'low' } },
  ],
  ['gemini', (e) => new GeminiAdapter({ apiKey: 'k', baseURL: e.geminiBaseURL }), 'gemini-2.5-flash', { model: 'gemini-3-flash' }],
];

/** The request on the wire: the adapter's body at the provider's path (Gemini: the REST body, the model and streaming in the path). */
function wireRequest(protocol: Protocol, emulator: ProviderEmulator, body: Record<string, unknown>): { url: string; body: unknown } {
  if (protocol === 'openai-chat') return { url: `${emulator.openAIBaseURL}/chat/completions`, body };
  if (protocol === 'openai-responses') return { url: `${emulator.openAIBaseURL}/responses`, body };
  if (protocol === 'anthropic') return { url: `${emulator.url}/v1/messages`, body };
  const { model, stream, ...rest } = body;
  return { url: `${emulator.url}/v1beta/models/${String(model)}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`, body: rest };
}

const dig = (value: unknown, ...path: (string | number)[]): unknown =>
  path.reduce<unknown>((v, k) => (v as Record<string | number, unknown> | null | undefined)?.[k], value);

/** Cached input tokens as the reply's own usage field says. */
function cachedTokens(protocol: Protocol, usageCarrier: unknown): unknown {
  if (protocol === 'openai-chat') return dig(usageCarrier, 'usage', 'prompt_tokens_details', 'cached_tokens');
  if (protocol === 'openai-responses') return dig(usageCarrier, 'usage', 'input_tokens_details', 'cached_tokens');
  if (protocol === 'anthropic') return dig(usageCarrier, 'usage', 'cache_read_input_tokens');
  return dig(usageCarrier, 'usageMetadata', 'cachedContentTokenCount');
}

/** The event of a stream that carries the whole usage. */
function usageEvent(protocol: Protocol, events: { data: unknown }[]): unknown {
  const data = events.map((e) => e.data);
  if (protocol === 'openai-chat') return data[data.length - 2];
  if (protocol === 'openai-responses') return dig(data[data.length - 1], 'response');
  if (protocol === 'anthropic') return dig(data[0], 'message');
  return data[data.length - 1];
}

describe.each(protocols)('%s: the emulator’s replies have the reference wire shapes', (protocol, make, model, thinking) => {
  const emulator = new ProviderEmulator();
  let adapter: ProviderAdapter;
  beforeAll(async () => {
    await emulator.start();
    adapter = make(emulator);
  });
  afterAll(() => emulator.stop());

  /** Sends the call raw; returns the reply's problems against the shapes, and what carries its usage. */
  async function exchange(call: ModelCall): Promise<{ problems: string[]; usage: unknown }> {
    const body = adapter.buildRequest(call);
    const request = wireRequest(protocol, emulator, body);
    const res = await fetch(request.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer k', 'x-api-key': 'k', 'anthropic-version': '2023-06-01', 'x-goog-api-key': 'k' },
      body: JSON.stringify(request.body),
    });
    const text = await res.text();
    expect({ status: res.status, text: res.status === 200 ? '' : text }).toEqual({ status: 200, text: '' });
    const requestProblems = WIRE_SHAPES[protocol].request.safeParse(request.body).error?.issues.map((i) => `request ${i.path.join('.')}: ${i.message}`) ?? [];
    if (!call.stream) {
      const json = JSON.parse(text) as unknown;
      const result = WIRE_SHAPES[protocol].response.safeParse(json);
      return { problems: [...requestProblems, ...(result.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`) ?? [])], usage: json };
    }
    const events = parseSse(text);
    const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
    return { problems: [...requestProblems, ...wireStreamProblems(protocol, events, { includeUsage })], usage: usageEvent(protocol, events) };
  }

  it('text, JSON then streamed, the later calls reading the cached prefix', async () => {
    const key = { cacheKey: `wire-${protocol}`, cacheBoundaries: true };
    const first = await exchange({ model, messages: story(1), ...key });
    expect(first.problems).toEqual([]);
    const second = await exchange({ model, messages: story(2), ...key });
    expect(second.problems).toEqual([]);
    expect(cachedTokens(protocol, second.usage)).toBeGreaterThan(0);
    const streamed = await exchange({ model, messages: story(3), ...key, stream: true });
    expect(streamed.problems).toEqual([]);
    expect(cachedTokens(protocol, streamed.usage)).toBeGreaterThan(0);
  });

  it('a forced tool call, JSON and streamed', async () => {
    for (const stream of [false, true]) {
      const reply = await exchange({ model, messages: story(0), tools: [tool], preferences: { toolChoice: { name: 'record_fact' } }, stream });
      expect(reply.problems).toEqual([]);
    }
  });

  it('a thinking model, JSON and streamed, with a tool call and in text', async () => {
    const { model: thinkingModel, ...overrides } = thinking;
    for (const stream of [false, true]) {
      const base: ModelCall = { model: thinkingModel, messages: story(0), overrides, maxOutputTokens: 4096, stream };
      const text = await exchange(base);
      expect(text.problems).toEqual([]);
      // Gemini counts the thinking apart from the candidates
      if (protocol === 'gemini') expect(dig(text.usage, 'usageMetadata', 'thoughtsTokenCount')).toBeGreaterThan(0);
      expect((await exchange({ ...base, tools: [tool], preferences: { toolChoice: 'required' } })).problems).toEqual([]);
    }
  });
});

describe('Anthropic automatic caching (a top-level cache_control), as the reference request has it', () => {
  const emulator = new ProviderEmulator();
  beforeAll(() => emulator.start());
  afterAll(() => emulator.stop());
  const fixture = JSON.parse(readFileSync(join(__dirname, '../../providers/test/fixtures/wire/anthropic/automatic-caching.json'), 'utf8')) as {
    request: { system: string; messages: { role: string; content: unknown }[] };
  };
  const send = async (body: unknown) => {
    const res = await fetch(`${emulator.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as { usage?: Record<string, number> } };
  };

  it('writes the prefix through the last block, and the next turn reads it', async () => {
    // the reference request with a system prompt over the model's minimum
    const request = { ...fixture.request, system: `${fixture.request.system}\n${LONG_SYSTEM}` };
    expect(WIRE_SHAPES.anthropic.request.safeParse(request).success).toBe(true);
    const first = await send(request);
    expect(first.status).toBe(200);
    expect(WIRE_SHAPES.anthropic.response.safeParse(first.body).success).toBe(true);
    expect(first.body.usage).toMatchObject({ cache_read_input_tokens: 0, input_tokens: 0 });
    expect(first.body.usage?.cache_creation_input_tokens).toBeGreaterThan(1024);
    const next = {
      ...request,
      messages: [...request.messages, { role: 'assistant', content: 'Pride, prejudice and marriage.' }, { role: 'user', content: 'And the characters?' }],
    };
    const second = await send(next);
    expect(second.body.usage?.cache_read_input_tokens).toBe(first.body.usage?.cache_creation_input_tokens);
  });

  it('a last block already marked with another TTL, or the 4 slots taken: a 400', async () => {
    const marked = (ttl?: '1h') => ({ type: 'text', text: 'x', cache_control: { type: 'ephemeral', ...(ttl ? { ttl } : {}) } });
    const base = { model: 'claude-opus-4-7', max_tokens: 64, cache_control: { type: 'ephemeral' } };
    expect((await send({ ...base, messages: [{ role: 'user', content: [marked('1h')] }] })).status).toBe(400);
    expect((await send({ ...base, messages: [{ role: 'user', content: [marked()] }] })).status).toBe(200);
    const four = [marked(), marked(), marked(), marked(), { type: 'text', text: 'y' }];
    expect((await send({ ...base, messages: [{ role: 'user', content: four }] })).status).toBe(400);
  });
});
