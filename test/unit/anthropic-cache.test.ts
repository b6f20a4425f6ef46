/** Cross-package: requests assembled by libs/context, sent by the Anthropic adapter to the emulator. */
import Anthropic from '@anthropic-ai/sdk';
import { buildContext, historyBoundary, type HistoryMessage } from '../../libs/context';
import { requestMessages } from '../../libs/engine';
import { AnthropicAdapter } from '../../libs/providers';
import { anthropicBlocks, ProviderEmulator } from '../../libs/emulator';
import { estimateTokens } from '../../libs/text';
import type { ChatMessage } from '../../libs/providers';

const countMarks = (body: Record<string, unknown>) => (JSON.stringify(body).match(/"cache_control"/g) ?? []).length;

interface Scenario {
  /** A turn extension segment, so the request has a turn context (default true). */
  turnContext?: boolean;
  /** A lorebook entry inserted at depth 0 (after the last conversation message). */
  depth0?: boolean;
  /** A bookkeeping runtime after the narrative: this turn's story text and the ending hint follow the input. */
  afterNarrative?: boolean;
  maxTurns?: number;
}

async function turnContext(history: HistoryMessage[], n: number, scenario: Scenario = {}) {
  const { turnContext: withTurnContext = true, depth0 = false, afterNarrative = false, maxTurns } = scenario;
  return buildContext({
    locale: 'en',
    runtime: {
      pluginId: afterNarrative ? 'tracker' : 'narrator',
      runtimeId: afterNarrative ? 'tracker' : 'narrator',
      outputKind: afterNarrative ? 'structured' : 'story',
      body: 'You are the narrator of Emberback. '.repeat(120),
      history: maxTurns === undefined ? {} : { maxTurns },
      stageIndex: 1,
    },
    history,
    playerInput: { messageId: `u${n}`, text: `input ${n}` },
    executionOutputs: afterNarrative ? [{ pluginId: 'narrator', runtimeId: 'narrator', outputKind: 'story', stageIndex: 0, text: storyText(n) }] : [],
    segments: [
      { id: 'rules', providerPluginId: 'narrator', content: '<rules>Be kind.</rules>', position: 'system', volatility: 'stable', role: 'system', order: 0 },
      ...(withTurnContext
        ? [
            {
              id: 'memory',
              providerPluginId: 'narrator',
              content: `<memory>turn ${n} mood ${n % 3}</memory>`,
              position: 'system' as const,
              volatility: 'turn' as const,
              role: 'system' as const,
              order: 0,
            },
          ]
        : []),
    ],
    lorebook: [
      { id: 'ember', content: 'Emberback is a sleeping dragon.', position: 'after-plugin', order: 0, reason: { kind: 'constant' } },
      ...(depth0 ? [{ id: 'ash', content: `Ash falls on the square (${n}).`, position: { depth: 0 }, order: 0, reason: { kind: 'constant' as const } }] : []),
    ],
  });
}

const storyText = (n: number) => `The lantern sputters over the square as night ${n} begins. `.repeat(12);

async function turnRequest(history: HistoryMessage[], n: number, scenario: Scenario = {}): Promise<ChatMessage[]> {
  return requestMessages(await turnContext(history, n, scenario));
}

const turnMessages = (n: number, story: string): HistoryMessage[] => [
  { messageId: `u${n}`, turnId: `t${n}`, role: 'user', sourceType: 'player', pluginId: null, runtimeId: null, outputKind: null, text: `input ${n}` },
  {
    messageId: `a${n}`,
    turnId: `t${n}`,
    role: 'assistant',
    sourceType: 'runtime',
    pluginId: 'narrator',
    runtimeId: 'narrator',
    outputKind: 'story',
    text: story,
  },
];

/** Indexes of the wire messages that carry a cache_control block. */
const markedMessages = (body: Record<string, unknown>) =>
  (body.messages as { content: { cache_control?: unknown }[] }[]).flatMap((m, i) => (m.content.some((b) => b.cache_control) ? [i] : []));

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
    const history = [0, 1].flatMap((n) => turnMessages(n, `story ${n}`));
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

  it.each<[string, Scenario]>([
    ['no turn context', { turnContext: false }],
    ['a turn context', {}],
    ['a depth-0 lorebook entry, no turn context', { turnContext: false, depth0: true }],
    ['a depth-0 lorebook entry and a turn context', { depth0: true }],
    ['a runtime after the narrative (story text, ending hint) with a depth-0 lorebook entry', { turnContext: false, depth0: true, afterNarrative: true }],
  ])(
    '%s: the history boundary is on the last message of the history; ≤ 4 boundaries; turn N+1 reads what turn N wrote up to the end of its history (12 turns)',
    async (_name, scenario) => {
      let history: HistoryMessage[] = [];
      let previousHistoryPrefix = 0;
      for (let n = 0; n < 12; n++) {
        const body = adapter.buildRequest({ model: 'claude-sonnet-4-5', messages: await turnRequest(history, n, scenario), cacheBoundaries: true });
        expect(countMarks(body)).toBeLessThanOrEqual(4);
        const wire = body.messages as { role: string; content: { type: string; text?: string; cache_control?: unknown }[] }[];
        // the history is the first 2n wire messages: its last one, and the last message of the request
        expect(markedMessages(body)).toEqual(n === 0 ? [wire.length - 1] : [2 * n - 1, wire.length - 1]);
        if (n > 0) {
          expect(wire[2 * n - 1].content[0].text).toBe(history[history.length - 1].text);
          expect(wire[2 * n].content[0].text).toMatch(scenario.turnContext === false ? /^input / : /^<system-instruction>\n<memory>/);
        }
        const response = await adapter.send(body);
        if (n > 0) expect(response.usage.cachedInputTokens).toBeGreaterThanOrEqual(previousHistoryPrefix);
        if (n > 1) expect(previousHistoryPrefix).toBeGreaterThan(1024);
        // the prefix up to the end of this request's history (the system prompt through its last
        // boundary when there is no history yet): the next turn must read at least that much
        const blocks = anthropicBlocks(body as never);
        const breakpoints = blocks.map((b, i) => (b.breakpoint ? i : -1)).filter((i) => i >= 0);
        const through = n === 0 ? breakpoints[breakpoints.length - 2] : blocks.map((b) => b.message).lastIndexOf(2 * n - 1);
        expect(blocks[through].breakpoint).toBe(true);
        previousHistoryPrefix = blocks.slice(0, through + 1).reduce((t, b) => t + estimateTokens(b.text), 0);
        history = [...history, ...turnMessages(n, scenario.afterNarrative ? storyText(n) : response.text)];
      }
    },
  );

  it('a depth-0 lorebook entry (no turn context) does not move the history boundary onto the player input', async () => {
    const history = [0, 1].flatMap((n) => turnMessages(n, `story ${n}`));
    const body = adapter.buildRequest({
      model: 'claude-sonnet-4-5',
      messages: await turnRequest(history, 2, { turnContext: false, depth0: true }),
      cacheBoundaries: true,
    });
    const wire = body.messages as { content: { text: string; cache_control?: unknown }[] }[];
    expect(wire.map((m) => m.content[0].text)).toEqual([
      'input 0',
      'story 0',
      'input 1',
      'story 1',
      'input 2',
      '<system-instruction>\nAsh falls on the square (2).\n</system-instruction>',
    ]);
    expect(markedMessages(body)).toEqual([3, 5]);
    expect(countMarks(body)).toBe(4);
  });

  it.each<[string, Scenario]>([
    ['maxTurns 0 with a turn context (merged into the top-level system)', { maxTurns: 0 }],
    ['maxTurns 0 without a turn context', { maxTurns: 0, turnContext: false }],
    ['maxTurns 0 with a depth-0 lorebook entry', { maxTurns: 0, turnContext: false, depth0: true }],
  ])('%s: no history, so no history boundary: only the last one in the messages', async (_name, scenario) => {
    const history = [0, 1].flatMap((n) => turnMessages(n, `story ${n}`));
    const body = adapter.buildRequest({ model: 'claude-sonnet-4-5', messages: await turnRequest(history, 2, scenario), cacheBoundaries: true });
    const wire = body.messages as { content: { text: string }[] }[];
    expect(wire[0].content[0].text).toBe('input 2');
    expect(markedMessages(body)).toEqual([wire.length - 1]);
    expect(countMarks(body)).toBe(3);
    const raw = await fetch(`${emulator.url}/v1/messages`, { method: 'POST', body: JSON.stringify(body) });
    expect(raw.status).toBe(200);
  });

  it('the history boundary follows the context, not the first later system message: summaries and pre-history count as history', async () => {
    const ctx = await turnContext([], 0, { turnContext: false });
    expect(historyBoundary(ctx)).toBe(-1);
    const withHistory = await turnContext(
      [0].flatMap((n) => turnMessages(n, `story ${n}`)),
      1,
      { depth0: true },
    );
    expect(withHistory.messageSections).toEqual(['history', 'history', 'turn-context', 'player-input', 'depth']);
    expect(historyBoundary(withHistory)).toBe(1);
    const summaryOnly = await buildContext({
      locale: 'en',
      runtime: { pluginId: 'p', runtimeId: 'r', outputKind: 'structured', body: 'b', history: { maxTurns: 0, includeSummaries: true }, stageIndex: null },
      history: turnMessages(0, 'story 0'),
      summaries: [{ id: 's1', content: 'Earlier, the lantern was lit.' }],
      playerInput: { messageId: 'u1', text: 'input 1' },
    });
    expect(summaryOnly.messageSections).toEqual(['summary', 'player-input']);
    expect(historyBoundary(summaryOnly)).toBe(0);
    expect(requestMessages(summaryOnly).map((m) => m.endsHistory === true)).toEqual([false, true, false]);
    const preHistoryOnly = await buildContext({
      locale: 'en',
      runtime: { pluginId: 'p', runtimeId: 'r', outputKind: 'structured', body: 'b', history: { maxTurns: 0 }, stageIndex: null },
      history: turnMessages(0, 'story 0'),
      playerInput: { messageId: 'u1', text: 'input 1' },
      segments: [{ id: 'style', providerPluginId: 'p', content: 'Write tersely.', position: 'pre-history', volatility: 'stable', role: 'user', order: 0 }],
    });
    expect(preHistoryOnly.messageSections).toEqual(['pre-history', 'player-input']);
    expect(historyBoundary(preHistoryOnly)).toBe(0);
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
