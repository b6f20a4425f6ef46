import { AnthropicAdapter, GeminiAdapter, OpenAIChatAdapter, OpenAIResponsesAdapter, PROVIDER_CACHE_BREAK, WIRE_SHAPES, wireStreamProblems } from '..';
import type { ChatMessage, ModelCall, Protocol, ProviderAdapter } from '..';
import { FixtureServer } from './wire/fixture-server';
import { wireFixtures, wireReplies } from './wire/fixtures';

/**
 * Golden wire fixtures: request and reply bodies, cached-token usage and streamed events taken
 * from the providers' public API references and official SDKs (each fixture names its source).
 * Every adapter reads them through its real SDK over HTTP (a loopback server answers with the
 * fixture's bytes), and what the adapter sent validates against the reference's request shape.
 */
const protocols: [Protocol, string, (url: string) => ProviderAdapter][] = [
  ['openai-chat', 'gpt-4.1-mini', (url) => new OpenAIChatAdapter({ apiKey: 'k', baseURL: `${url}/v1`, maxRetries: 0 })],
  ['openai-responses', 'gpt-4.1-mini', (url) => new OpenAIResponsesAdapter({ apiKey: 'k', baseURL: `${url}/v1`, maxRetries: 0 })],
  ['anthropic', 'claude-sonnet-4-5', (url) => new AnthropicAdapter({ apiKey: 'k', baseURL: url, maxRetries: 0 })],
  ['gemini', 'gemini-2.5-flash', (url) => new GeminiAdapter({ apiKey: 'k', baseURL: url, maxAttempts: 1 })],
];

const issues = (result: { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } }) =>
  result.success ? [] : (result.error?.issues ?? []).map((i) => `${i.path.map(String).join('.')}: ${i.message}`);

const B = PROVIDER_CACHE_BREAK;
/** A tool-loop turn with the engine's cache boundaries: stable system segments, a history, the turn. */
const turn: ChatMessage[] = [
  { role: 'system', content: `You are the narrator.${B}The world is a salt desert.${B}` },
  { role: 'user', content: 'What is the weather like in San Francisco?', images: [{ mimeType: 'image/png', data: 'iVBORw0KGgo=' }] },
  { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: { location: 'San Francisco, CA' } }] },
  { role: 'tool', content: '{"temperature":15}', toolCallId: 'call_1', toolName: 'get_weather', endsHistory: true },
  { role: 'system', content: 'Answer in one sentence.' },
  { role: 'user', content: 'And tomorrow?' },
];
const call = (model: string, stream: boolean): ModelCall => ({
  model,
  stream,
  messages: turn,
  maxOutputTokens: 512,
  temperature: 0.7,
  cacheKey: 'session-1:narrator',
  cacheBoundaries: true,
  tools: [
    {
      name: 'get_weather',
      description: 'Get the current weather in a given location',
      parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
    },
  ],
});

describe.each(protocols)('%s: golden wire fixtures', (protocol, model, make) => {
  const server = new FixtureServer();
  let adapter: ProviderAdapter;
  const fixtures = wireReplies(protocol);
  const requests = wireFixtures(protocol).filter(([, f]) => f.request);
  beforeAll(async () => {
    await server.start();
    adapter = make(server.url);
  });
  afterAll(() => server.stop());

  it('cover a text reply, a tool call, cached-token usage and a stream', () => {
    expect(fixtures.some(([, f]) => f.response && f.expect.toolCalls.length === 0)).toBe(true);
    expect(fixtures.some(([, f]) => f.expect.toolCalls.length > 0)).toBe(true);
    expect(fixtures.some(([, f]) => f.expect.usage.cachedInputTokens > 0)).toBe(true);
    expect(fixtures.some(([, f]) => f.events)).toBe(true);
  });

  it.each(fixtures)('%s: the reply has the reference shape', (_name, f) => {
    if (f.response !== undefined) expect(issues(WIRE_SHAPES[protocol].response.safeParse(f.response))).toEqual([]);
    else expect(wireStreamProblems(protocol, f.events!, { includeUsage: true })).toEqual([]);
  });

  it.each(requests)('%s: the reference request has the request shape', (_name, f) => {
    expect(issues(WIRE_SHAPES[protocol].request.safeParse(f.request))).toEqual([]);
  });

  it.each(fixtures)('%s: the adapter reads text, tool calls and usage through the SDK, and sends a request of the reference shape', async (_name, f) => {
    server.answer(f);
    const deltas: string[] = [];
    const stream = f.events !== undefined;
    const reply = await adapter.send(adapter.buildRequest(call(model, stream)), { onText: (d) => deltas.push(d) });
    expect(reply.text).toBe(f.expect.text);
    expect(reply.toolCalls).toEqual(f.expect.toolCalls);
    expect(reply.finishReason).toBe(f.expect.finishReason);
    expect(reply.usage).toEqual(f.expect.usage);
    if (f.expect.thinking !== undefined) expect(reply.thinking?.text).toBe(f.expect.thinking);
    if (stream) expect(deltas.join('')).toBe(f.expect.text);
    const sent = server.requests[server.requests.length - 1];
    expect(issues(WIRE_SHAPES[protocol].request.safeParse(sent.body))).toEqual([]);
    if (protocol === 'gemini') expect(sent.url).toMatch(stream ? /:streamGenerateContent\?alt=sse$/ : /:generateContent$/);
  });
});

describe('the request shapes hold the references’ placement rules', () => {
  const anthropic = WIRE_SHAPES.anthropic.request;
  const marked = (text: string, ttl?: '5m' | '1h') => ({ type: 'text', text, cache_control: { type: 'ephemeral', ...(ttl ? { ttl } : {}) } });
  const body = (system: unknown[], content: unknown[] = [{ type: 'text', text: 'Hi' }]) => ({
    model: 'claude-sonnet-4-5',
    max_tokens: 64,
    system,
    messages: [{ role: 'user', content }],
  });

  it('Anthropic: at most 4 cache_control blocks, counted over tools, system and messages', () => {
    expect(anthropic.safeParse(body([marked('a'), marked('b')], [marked('c'), marked('d')])).success).toBe(true);
    expect(issues(anthropic.safeParse(body([marked('a'), marked('b'), marked('c')], [marked('d'), marked('e')])))).toEqual([
      ': at most 4 blocks carry cache_control (found 5)',
    ]);
  });

  it('Anthropic: no cache_control on a thinking block or an empty text block; 1h breakpoints before 5m ones', () => {
    const thinking = { role: 'assistant', content: [{ type: 'thinking', thinking: 't', signature: 's', cache_control: { type: 'ephemeral' } }] };
    expect(anthropic.safeParse({ ...body([]), messages: [{ role: 'user', content: 'Hi' }, thinking, { role: 'user', content: 'Go on' }] }).success).toBe(false);
    expect(issues(anthropic.safeParse(body([marked('')])))).toEqual([': an empty text block cannot carry cache_control']);
    expect(anthropic.safeParse(body([marked('a', '1h'), marked('b')])).success).toBe(true);
    expect(issues(anthropic.safeParse(body([marked('a'), marked('b', '1h')])))).toEqual([': a 1h breakpoint comes before every 5m one']);
  });

  it('Anthropic: the adapter’s boundaries with a carried thinking block stay within the rules', () => {
    const adapter = new AnthropicAdapter({ apiKey: 'k' });
    const thinking = { type: 'thinking', thinking: 'The user wants the weather.', signature: 'EqQBCgIYAhIM' };
    const messages: ChatMessage[] = turn.map((m) => (m.toolCalls ? { ...m, continuation: { protocol: 'anthropic', blocks: [thinking] } } : m));
    const sent = adapter.buildRequest({ ...call('claude-sonnet-4-5', false), messages, overrides: { reasoning: { enabled: true, effort: 'low' } } });
    expect(issues(anthropic.safeParse(sent))).toEqual([]);
    expect(JSON.stringify(sent).match(/cache_control/g)).toHaveLength(4);
  });

  it('OpenAI Chat: stream_options only with stream: true', () => {
    const chat = { model: 'gpt-4.1', messages: [{ role: 'user', content: 'Hi' }], stream_options: { include_usage: true } };
    expect(issues(WIRE_SHAPES['openai-chat'].request.safeParse(chat))).toEqual([': stream_options is set only with stream: true']);
    expect(WIRE_SHAPES['openai-chat'].request.safeParse({ ...chat, stream: true }).success).toBe(true);
  });
});

describe('the stream rules catch a stream the references would not send', () => {
  const eventsOf = (protocol: Protocol, name: string) =>
    structuredClone(wireFixtures(protocol).find(([n]) => n === name)![1].events!) as { event?: string; data: Record<string, unknown> }[];

  it('OpenAI Chat with include_usage: a chunk without usage: null; no usage chunk', () => {
    const events = eventsOf('openai-chat', 'stream-include-usage');
    delete events[1].data.usage;
    expect(wireStreamProblems('openai-chat', events, { includeUsage: true })).toEqual(['with include_usage every chunk carries a usage field']);
    const noUsageChunk = eventsOf('openai-chat', 'stream-include-usage').filter((e) => !(Array.isArray(e.data.choices) && e.data.choices.length === 0));
    expect(wireStreamProblems('openai-chat', noUsageChunk, { includeUsage: true })).toEqual(['the last chunk has the usage and an empty choices array']);
  });

  it('Responses: an output item done without being added; a created response with usage', () => {
    const events = eventsOf('openai-responses', 'stream').filter((e) => e.event !== 'response.output_item.added');
    expect(wireStreamProblems('openai-responses', events)).toEqual(['output item 0 is done without being added']);
    const created = eventsOf('openai-responses', 'stream');
    (created[0].data.response as Record<string, unknown>).usage = { input_tokens: 1, output_tokens: 0, total_tokens: 1 };
    expect(wireStreamProblems('openai-responses', created)).toEqual(['#0 response.created.response: a response in progress has no output and usage null yet']);
  });

  it('Anthropic: a delta of another kind than its block; a block opened inside another', () => {
    const events = eventsOf('anthropic', 'stream-cached-tool-use');
    const firstJson = events.findIndex((e) => (e.data.delta as { type?: string } | undefined)?.type === 'input_json_delta');
    events[firstJson].data.delta = { type: 'text_delta', text: 'x' };
    expect(wireStreamProblems('anthropic', events)).toEqual(['a text_delta in a tool_use block']);
    const nested = eventsOf('anthropic', 'stream-cached-tool-use').filter((e, i, all) => !(e.event === 'content_block_stop' && i < all.length - 4));
    expect(wireStreamProblems('anthropic', nested)).toContain('content_block_start 1 while block 0 is open');
  });

  it('Gemini: a last chunk without finishReason and usage', () => {
    const events = eventsOf('gemini', 'stream-cached').slice(0, -1);
    expect(wireStreamProblems('gemini', events)).toEqual(['the last chunk carries the finishReason', 'the last chunk carries the whole usageMetadata']);
  });
});
