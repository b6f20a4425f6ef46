import { join } from 'node:path';
import { loadPlugin } from '../../../libs/plugins-sdk';
import {
  createPluginHarness,
  type HarnessTurn,
  type PluginHarness,
  CACHEABLE_PREFIX_MIN,
  UUID_PATTERN,
  sharedPrefixTokens,
} from '../../../libs/plugin-testing';
import { advance, startOf, timeOfDay } from '../server/clock';

jest.setTimeout(120_000);

const ROOT = join(__dirname, '..', '..', '..');
const PLUGINS = [join(ROOT, 'plugins', 'narrator'), join(__dirname, '..')];
const WORLD = join(ROOT, 'worlds', 'emberback');

describe('world-time clock and manifest', () => {
  it('advances across midnight, names the time of day, and reads the start from the world', () => {
    expect(advance({ day: 1, minute: 23 * 60 + 30 }, 45)).toEqual({ day: 2, minute: 15 });
    expect([0, 5 * 60, 12 * 60, 17 * 60, 21 * 60].map(timeOfDay)).toEqual(['night', 'morning', 'afternoon', 'evening', 'night']);
    expect(startOf({ start: { day: 3, time: '21:15' } })).toEqual({ day: 3, minute: 21 * 60 + 15 });
    expect(startOf({ start: { day: 0, time: '25:00' } })).toEqual({ day: 1, minute: 480 });
  });

  it('has one child runtime, advance: post-turn, the named tool that completes the runtime, no finalizer, maxTurns 0; off by default', () => {
    const plugin = loadPlugin(join(__dirname, '..'));
    expect(plugin.manifest.enabledByDefault).toBe(false);
    expect(plugin.manifest.contributes.events.map((e) => e.topic)).toEqual(['world-time.advanced']);
    expect(plugin.runtimes.map((r) => r.fullId)).toEqual(['world-time/advance']);
    expect(plugin.runtimes[0].manifest).toMatchObject({
      schedule: { stage: 'post-turn' },
      outputKind: 'none',
      agent: { tools: ['advance-clock'], toolChoice: { name: 'advance-clock' }, reasoning: false, history: { maxTurns: 0 } },
    });
    expect(plugin.runtimes[0].manifest.finalizer).toBeUndefined();
    expect(plugin.runtimes[0].manifest.agent?.loop.maxSteps).toBeUndefined();
    expect(plugin.manifest.contributes.tools.map((t) => [t.name, t.completesRuntime])).toEqual([['advance-clock', true]]);
    expect(plugin.runtimes[0].bodies['zh-Hans']).toMatch(/时钟/);
  });
});

describe('world-time/advance (contract, through the engine)', () => {
  let h: PluginHarness;
  const turns: HarnessTurn[] = [];
  beforeAll(async () => {
    h = await createPluginHarness({
      plugins: [...PLUGINS, join(__dirname, 'fixtures', 'clock-listener')],
      world: WORLD,
      // Emberback lists the plugins its sessions run; the test fixture that follows the event is not one of them
      sessionPlugins: ['narrator', 'world-time', 'clock-listener'],
      replies: {
        'narrator/narrator': ['You spend the day mending nets.', 'You sleep by the vent until morning.', 'Mira nods.'],
        'world-time/advance': [
          // turn 1: one call, which ends the runtime
          { tool: 'advance-clock', args: { minutes: 390 } },
          // turn 2: a refused call (over one week), then the corrected one
          { tool: 'advance-clock', args: { minutes: 20000 } },
          { tool: 'advance-clock', args: { minutes: 1200 } },
          // turn 3: the emulator's own reply to the named tool: advance-clock({ minutes: 0 }), "no change"
        ],
      },
    });
    for (const text of ['I mend nets', 'I sleep', 'I nod back']) turns.push(await h.turn(text));
  });
  afterAll(() => h.close());

  it('forces advance-clock by name; a successful call ends the runtime: one request per turn, two when the first call is refused', () => {
    expect(turns.map((t) => t.status)).toEqual(['committed', 'committed', 'committed']);
    expect(turns.map((t) => t.requestsOf('world-time', 'advance').length)).toEqual([1, 2, 1]);
    for (const turn of turns)
      for (const request of turn.requestsOf('world-time', 'advance')) {
        expect(request.body.tool_choice).toEqual({ type: 'function', function: { name: 'advance-clock' } });
        expect(request.toolNames).toEqual(['runtime-done', 'advance-clock']);
        expect(request.messages.some((m) => m.section === 'history')).toBe(false);
      }
    const outcomes = turns.map((turn) =>
      turn
        .eventsOf('tool.completed@1')
        .filter((e) => e.pluginId === 'world-time')
        .map((e) => [e.name, e.ok, e.done ?? null]),
    );
    expect(outcomes).toEqual([
      [['advance-clock', true, true]],
      [
        ['advance-clock', false, null],
        ['advance-clock', true, true],
      ],
      [['advance-clock', true, true]],
    ]);
  });

  it('places the rules in the system prompt, the time in the turn context, and the time for the story too', () => {
    const request = turns[0].request('world-time', 'advance');
    expect(request.segmentsOf('world-time').map((s) => [s.id, s.volatility, s.placement])).toEqual([
      ['world-time-rules', 'session', 'system-prompt'],
      ['world-time-now', 'turn', 'turn-context'],
    ]);
    expect(request.section('segments')).toContain("The story's clock started on Day 1, 08:00 (morning)");
    expect(request.turnContext).toContain('The time in the story now: Day 1, 08:00 (morning)');
    const narrator = turns[0].request('narrator');
    expect(narrator.segmentsOf('world-time').map((s) => [s.id, s.volatility, s.placement])).toEqual([
      ['world-time-story-intro', 'session', 'system-prompt'],
      ['world-time-story', 'turn', 'turn-context'],
    ]);
    expect(narrator.turnContext).toContain('<world-time>\nDay 1, 08:00 (morning)\n</world-time>');
  });

  it("the story's turn context carries only the clock: the line that says what <world-time> is sits once in its system prompt (issue 33: the turn context is new every turn)", () => {
    const narrators = turns.map((t) => t.request('narrator'));
    for (const narrator of narrators) {
      expect(narrator.systemPrompt).toContain('<world-time> gives the time in the story now.');
      expect(narrator.turnContext).not.toContain('The time in the story now');
    }
    expect(new Set(narrators.map((r) => r.systemPrompt)).size).toBe(1);
  });

  it('writes the clock after a scripted call, shows it next turn, and announces each advance (not a 0-minute one)', async () => {
    expect(turns[1].request('world-time', 'advance').turnContext).toContain('Day 1, 14:30 (afternoon)');
    expect(turns[2].request('world-time', 'advance').turnContext).toContain('Day 2, 10:30 (morning)');
    expect(turns[2].request('narrator').turnContext).toContain('Day 2, 10:30 (morning)');
    // turn 3 ran on the emulator's own reply: advance-clock({ minutes: 0 })
    expect(await h.pluginData('world-time', 'clock')).toEqual([{ key: 'now', value: { day: 2, minute: 630 } }]);
    expect(turns.map((t) => t.eventsOf('tool.completed@1').find((e) => e.name === 'advance-clock' && e.ok)?.emittedTopics ?? null)).toEqual([
      ['world-time.advanced'],
      ['world-time.advanced'],
      null,
    ]);
    const payloads = (await h.events()).filter((e) => e.type === 'runtime.activated@1').map((e) => (e.data as { payload: unknown }).payload);
    expect(payloads).toEqual([
      { day: 1, time: '14:30', timeOfDay: 'afternoon', minutes: 390 },
      { day: 2, time: '10:30', timeOfDay: 'morning', minutes: 1200 },
    ]);
  });

  it('each call has a one-line summary for the player: the clock before and after; a 0-minute call has none (nothing to tell the player)', () => {
    expect(turns.map((t) => t.toolSummaries('advance-clock'))).toEqual([['Day 1, 08:00 → 14:30'], ['Day 1, 14:30 → Day 2, 10:30'], [undefined]]);
  });

  it('keeps the system prompt byte-identical across turns; no ids in the prompt', async () => {
    const requests = turns.map((t) => t.request('world-time', 'advance'));
    expect(new Set(requests.map((r) => r.systemPrompt)).size).toBe(1);
    for (const r of requests) expect(r.systemPrompt + r.turnContext).not.toMatch(UUID_PATTERN);
    expect(await h.audit()).toMatchObject({ identical: true });
  });

  it('has a stable prefix (tool definitions + system prompt) of at least 1,280 emulator tokens (1,024 + margin), which the emulator reads from cache', () => {
    for (let i = 1; i < turns.length; i++) {
      const [before, after] = [turns[i - 1].request('world-time', 'advance'), turns[i].request('world-time', 'advance')];
      expect(sharedPrefixTokens(before, after)).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_MIN);
      expect(turns[i].cachedTokens(after)).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_MIN);
    }
  });
});

describe('world-time in a zh-Hans session, with the world setting the start', () => {
  let h: PluginHarness;
  beforeAll(async () => {
    h = await createPluginHarness({
      plugins: PLUGINS,
      world: { name: '龙背村', lore: '村子建在一条沉睡的龙背上。', pluginConfig: { 'world-time': { start: { day: 3, time: '21:15' } } } },
      locale: 'zh-Hans',
      replies: { 'narrator/narrator': '夜深了。' },
    });
  });
  afterAll(() => h.close());

  it('reads the Chinese body and time; the summary of the emulator’s 0-minute call is in Chinese', async () => {
    const first = await h.turn('我睡觉');
    expect(first.toolSummaries('advance-clock')).toEqual([undefined]);
    const request = first.request('world-time', 'advance');
    expect(sharedPrefixTokens(request, (await h.turn('我醒来')).request('world-time', 'advance'))).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_MIN);
    expect(request.section('runtime-body')).toContain('世界内的时钟');
    expect(request.section('segments')).toContain('故事的时钟从第 3 天，21:15（夜晚）开始');
    expect(request.turnContext).toContain('故事中的当前时间：第 3 天，21:15（夜晚）');
  });
});
