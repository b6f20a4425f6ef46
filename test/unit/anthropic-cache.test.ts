/** Cross-package: requests assembled by libs/context, sent by the Anthropic adapter to the emulator. */
import Anthropic from '@anthropic-ai/sdk';
import { buildContext, type HistoryMessage } from '../../libs/context';
import { AnthropicAdapter, anthropicBlocks, emulatorTokenCount, ProviderEmulator } from '../../libs/providers';
import type { ChatMessage } from '../../libs/providers';

const countMarks = (body: Record<string, unknown>) => (JSON.stringify(body).match(/"cache_control"/g) ?? []).length;

async function turnRequest(history: HistoryMessage[], n: number): Promise<ChatMessage[]> {
  const ctx = await buildContext({
    locale: 'en',
    runtime: {
      pluginId: 'narrator',
      runtimeId: 'narrator',
      outputKind: 'story',
      body: 'You are the narrator of Emberback. '.repeat(120),
      history: {},
      stageIndex: 1,
    },
    history,
    playerInput: { messageId: `u${n}`, text: `input ${n}` },
    segments: [
      { id: 'rules', providerPluginId: 'narrator', content: '<rules>Be kind.</rules>', position: 'system', volatility: 'stable', role: 'system', order: 0 },
      {
        id: 'memory',
        providerPluginId: 'narrator',
        content: `<memory>turn ${n} mood ${n % 3}</memory>`,
        position: 'system',
        volatility: 'turn',
        role: 'system',
        order: 0,
      },
    ],
    lorebook: [{ id: 'ember', content: 'Emberback is a sleeping dragon.', position: 'after-plugin', order: 0, reason: { kind: 'constant' } }],
  });
  return [{ role: 'system', content: ctx.systemPrompt }, ...ctx.messages.map((m) => ({ role: m.role, content: m.content }))];
}

describe('§5 Anthropic: four boundaries and what the next turn reads', () => {
  const emulator = new ProviderEmulator();
  let adapter: AnthropicAdapter;
  beforeAll(async () => {
    await emulator.start();
    adapter = new AnthropicAdapter({ apiKey: 'k', baseURL: emulator.anthropicBaseURL, maxRetries: 0 });
  });
  afterAll(() => emulator.stop());

  it('system sentinels become at most two cache_control text blocks; every message is a block array', async () => {
    const body = adapter.buildRequest({ model: 'claude-sonnet-4-5', messages: await turnRequest([], 0), cacheBoundaries: true });
    const system = body.system as { text: string; cache_control?: unknown }[];
    expect(system.filter((b) => b.cache_control)).toHaveLength(2);
    expect(system.map((b) => b.text).join('')).not.toContain('\uE000');
    expect((body.messages as { content: unknown }[]).every((m) => Array.isArray(m.content))).toBe(true);
    // no history (the turn context is leading): only the last boundary in the messages
    expect(countMarks({ messages: body.messages })).toBe(1);
  });

  it('the turn context after the history is user content wrapped in <system-instruction>; no system role in messages', async () => {
    const history = [0, 1].flatMap((n): HistoryMessage[] => [
      { messageId: `u${n}`, turnId: `t${n}`, role: 'user', sourceType: 'player', pluginId: null, runtimeId: null, outputKind: null, text: `input ${n}` },
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
    ]);
    const body = adapter.buildRequest({ model: 'claude-sonnet-4-5', messages: await turnRequest(history, 2), cacheBoundaries: true });
    const messages = body.messages as { role: string; content: { text: string; cache_control?: unknown }[] }[];
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'user']);
    expect(messages[4].content[0].text).toMatch(/^<system-instruction>\n<memory>turn 2/);
    // boundaries: last message of the history, and the last cacheable block
    expect(messages[3].content[0].cache_control).toEqual({ type: 'ephemeral' });
    expect(messages[5].content[0].cache_control).toEqual({ type: 'ephemeral' });
    expect(countMarks(body)).toBe(4);
    const raw = await fetch(`${emulator.url}/v1/messages`, { method: 'POST', body: JSON.stringify(body) });
    expect(raw.status).toBe(200);
  });

  it("the emulator rejects more than four cache_control blocks and a system role inside messages, in Anthropic's error shape", async () => {
    const client = new Anthropic({ apiKey: 'k', baseURL: emulator.anthropicBaseURL, maxRetries: 0 });
    const cc = { type: 'ephemeral' as const };
    const five = client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 10,
      system: [1, 2, 3].map((i) => ({ type: 'text' as const, text: `s${i}`, cache_control: cc })),
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a', cache_control: cc },
            { type: 'text', text: 'b', cache_control: cc },
          ],
        },
      ],
    });
    await expect(five).rejects.toMatchObject({
      status: 400,
      error: { type: 'error', error: { type: 'invalid_request_error', message: 'A maximum of 4 blocks with cache_control may be provided. Found 5.' } },
    });
    const system = fetch(`${emulator.url}/v1/messages`, {
      method: 'POST',
      body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'system', content: 'x' }] }),
    });
    expect((await system).status).toBe(400);
  });

  it('20 turns: no request carries more than 4 cache_control blocks, and turn N+1 reads everything turn N wrote up to the end of its history', async () => {
    let history: HistoryMessage[] = [];
    let previousHistoryPrefix = 0;
    for (let n = 0; n < 20; n++) {
      const body = adapter.buildRequest({ model: 'claude-sonnet-4-5', messages: await turnRequest(history, n), cacheBoundaries: true });
      expect(countMarks(body)).toBeLessThanOrEqual(4);
      const response = await adapter.send(body);
      if (n > 0) expect(response.usage.cachedInputTokens).toBeGreaterThanOrEqual(previousHistoryPrefix);
      if (n > 1) expect(previousHistoryPrefix).toBeGreaterThan(1024);
      // what this request wrote up to the end of its history: the prefix through its last breakpoint
      // that is not the final one (the history boundary, or the last system boundary with no history)
      const blocks = anthropicBlocks(body as never);
      const breakpoints = blocks.map((b, i) => (b.breakpoint ? i : -1)).filter((i) => i >= 0);
      const through = breakpoints[breakpoints.length - 2];
      previousHistoryPrefix = blocks.slice(0, through + 1).reduce((t, b) => t + emulatorTokenCount(b.text), 0);
      history = [
        ...history,
        { messageId: `u${n}`, turnId: `t${n}`, role: 'user', sourceType: 'player', pluginId: null, runtimeId: null, outputKind: null, text: `input ${n}` },
        {
          messageId: `a${n}`,
          turnId: `t${n}`,
          role: 'assistant',
          sourceType: 'runtime',
          pluginId: 'narrator',
          runtimeId: 'narrator',
          outputKind: 'story',
          text: response.text,
        },
      ];
    }
  });

  it('thinking blocks carry no cache_control', () => {
    const body = adapter.buildRequest({
      model: 'claude-sonnet-4-5',
      cacheBoundaries: true,
      messages: [
        { role: 'system', content: 'S' },
        { role: 'user', content: 'q' },
        { role: 'assistant', content: '', thinking: { text: 'hmm', signature: 'sig' } },
      ],
    });
    const messages = body.messages as { content: { type: string; cache_control?: unknown }[] }[];
    expect(messages[1].content).toEqual([{ type: 'thinking', thinking: 'hmm', signature: 'sig' }]);
    // the boundary went to the last cacheable block instead
    expect(messages[0].content[0].cache_control).toEqual({ type: 'ephemeral' });
  });
});
