import { join } from 'node:path';
import { loadPlugin } from '../../../libs/plugins-sdk';
import {
  createPluginHarness,
  type HarnessTurn,
  type PluginHarness,
  CACHEABLE_PREFIX_MIN,
  ISO_TIME_PATTERN,
  UUID_PATTERN,
  prefixReuse,
  sharedPrefixTokens,
} from '../../../libs/plugin-testing';

jest.setTimeout(120_000);

const ROOT = join(__dirname, '..', '..', '..');
const PLUGINS = [join(ROOT, 'plugins', 'narrator'), join(__dirname, '..')];
const WORLD = join(ROOT, 'worlds', 'emberback');

describe('affinity manifest', () => {
  it('is a post-turn agent, off by default, with a forced tool, no reasoning and no history window', () => {
    const plugin = loadPlugin(join(__dirname, '..'));
    expect(plugin.manifest.enabledByDefault).toBe(false);
    const [runtime] = plugin.runtimes;
    expect(runtime.fullId).toBe('affinity/affinity');
    expect(runtime.manifest).toMatchObject({
      schedule: { stage: 'post-turn', trigger: 'auto' },
      outputKind: 'none',
      agent: { tools: ['update-affinity'], toolChoice: 'required', reasoning: false, history: { maxTurns: 0 } },
    });
    expect(runtime.bodies['zh-Hans']).toMatch(/好感/);
  });
});

describe('affinity (contract, through the engine)', () => {
  let h: PluginHarness;
  const turns: HarnessTurn[] = [];
  beforeAll(async () => {
    h = await createPluginHarness({
      plugins: PLUGINS,
      world: WORLD,
      replies: {
        'narrator/narrator': [
          'Mira pulls you from the ash river and laughs at your wet boots.',
          'Tomas writes your name in the ledger.',
          'Snow falls on the vents.',
        ],
        'affinity/affinity': [
          // turn 1: one write, which ends the runtime
          { tool: 'update-affinity', args: { updates: [{ character: 'mira', score: 3, feeling: 'amused, protective' }] } },
          // turn 2: a refused write, then the corrected one
          {
            tool: 'update-affinity',
            args: {
              updates: [
                { character: 'tomas', score: 2, feeling: 'wary' },
                { character: 'nobody', score: 1, feeling: 'x' },
              ],
            },
          },
          { tool: 'update-affinity', args: { updates: [{ character: 'tomas', score: 1, feeling: 'notes the courier in his ledger' }] } },
          // turn 3: "no change" is the same call with an empty list
          { tool: 'update-affinity', args: { updates: [] } },
          // turn 4: the emulator's own reply
        ],
      },
    });
    for (const text of ['I slip into the river', 'I go to the watchtower', 'I wait', 'I wait again']) turns.push(await h.turn(text));
  });
  afterAll(() => h.close());

  it('puts the roster in a session segment (system prompt) and the values in a turn segment (turn context)', () => {
    const request = turns[0].request('affinity');
    expect(request.segmentsOf('affinity').map((s) => [s.id, s.volatility, s.placement])).toEqual([
      ['affinity-characters', 'session', 'system-prompt'],
      ['affinity-values', 'turn', 'turn-context'],
    ]);
    expect(request.section('segments')).toContain('<affinity-characters>');
    expect(request.section('segments')).toContain('- mira | Mira (aka the ferrywoman)');
    expect(request.section('segments')).toContain('- tomas | Tomas Vell (aka the captain)');
    expect(request.section('segments')).not.toContain('- ash |'); // the player's character
    expect(request.turnContext).toContain('- mira | no record yet: score 0, neutral');
  });

  it('forces a tool (required), defines only runtime-done and its write tool, and sends no history (maxTurns 0)', () => {
    for (const turn of turns) {
      const request = turn.request('affinity');
      expect(request.body.tool_choice).toBe('required');
      expect(request.toolNames).toEqual(['runtime-done', 'update-affinity']);
      expect(request.messages.some((m) => m.section === 'history')).toBe(false);
    }
    const second = turns[1].request('affinity');
    expect(second.messages.find((m) => m.section === 'story-text')?.content).toBe('Tomas writes your name in the ledger.');
    expect(second.messages.map((m) => m.content).join('\n')).not.toContain('Mira pulls you from the ash river');
  });

  it('sends one request per turn: a successful update-affinity ends the runtime, "no change" ([]) too', () => {
    expect(turns.map((t) => t.status)).toEqual(['committed', 'committed', 'committed', 'committed']);
    expect(turns.map((t) => t.requestsOf('affinity').length)).toEqual([1, 2, 1, 1]);
    for (const i of [0, 2])
      expect(
        turns[i]
          .eventsOf('tool.completed@1')
          .filter((e) => e.pluginId === 'affinity')
          .map((e) => [e.name, e.ok, e.done]),
      ).toEqual([['update-affinity', true, true]]);
  });

  it('writes the scripted update to plugin data and shows it in the next turn context; a refused update keeps nothing, the corrected one is kept', async () => {
    expect(turns[1].request('affinity').turnContext).toContain('- mira | {"score":3,"feeling":"amused, protective"}');
    const outcomes = turns[1].eventsOf('tool.completed@1').filter((e) => e.name === 'update-affinity');
    expect(outcomes.map((o) => [o.ok, o.errorCode, o.done])).toEqual([
      [false, 'TOOL_FAILED', undefined],
      [true, undefined, true],
    ]);
    expect(await h.pluginData('affinity', 'scores')).toEqual([
      { key: 'mira', value: { score: 3, feeling: 'amused, protective' } },
      { key: 'tomas', value: { score: 1, feeling: 'notes the courier in his ledger' } },
    ]);
    expect(turns[2].request('affinity').turnContext).toContain('- tomas | {"score":1,"feeling":"notes the courier in his ledger"}');
    // the fourth turn ran on the emulator's own reply to `required` and ended cleanly with runtime-done
    expect(
      turns[3]
        .eventsOf('tool.completed@1')
        .filter((e) => e.pluginId === 'affinity')
        .map((o) => [o.name, o.done]),
    ).toEqual([['runtime-done', true]]);
  });

  it('each successful write has a one-line summary for the player, characters by name; "no change" says so', () => {
    expect(turns.slice(0, 3).map((t) => t.toolSummaries('update-affinity'))).toEqual([
      ['Mira: 3 (amused, protective)'],
      ['Tomas Vell: 1 (notes the courier in his ledger)'],
      [undefined],
    ]);
  });

  it('keeps the system prompt byte-identical across turns, and no ids or times in the prompt', async () => {
    const prompts = turns.map((t) => t.request('affinity').systemPrompt);
    expect(new Set(prompts).size).toBe(1);
    for (const turn of turns) {
      const r = turn.request('affinity');
      for (const text of [r.systemPrompt, r.turnContext]) {
        expect(text).not.toMatch(UUID_PATTERN);
        expect(text).not.toMatch(ISO_TIME_PATTERN);
      }
    }
    expect(await h.audit()).toMatchObject({ identical: true });
  });

  it('has a stable prefix (tool definitions + system prompt) of at least 1,280 emulator tokens (1,024 + margin), which the emulator reads from cache', () => {
    for (const { sharedTokens, cachedTokens } of prefixReuse(turns, (t) => t.request('affinity'))) {
      expect(sharedTokens).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_MIN);
      expect(cachedTokens).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_MIN);
    }
  });
});

describe('affinity in a zh-Hans session', () => {
  let h: PluginHarness;
  beforeAll(async () => {
    h = await createPluginHarness({ plugins: PLUGINS, world: WORLD, locale: 'zh-Hans', replies: { 'narrator/narrator': '米拉把你从灰烬河里拉了上来。' } });
  });
  afterAll(() => h.close());

  it('reads the Chinese body and Chinese segment text, and ends cleanly on the emulator default', async () => {
    const turn = await h.turn('我跳进河里');
    const request = turn.request('affinity');
    const next = (await h.turn('我等着')).request('affinity');
    expect(sharedPrefixTokens(request, next)).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_MIN);
    expect(request.section('runtime-body')).toContain('好感');
    expect(request.section('segments')).toContain('你记录其感受的非玩家角色');
    expect(request.turnContext).toContain('尚无记录');
    expect(
      turn
        .eventsOf('tool.completed@1')
        .filter((e) => e.pluginId === 'affinity')
        .map((e) => e.done),
    ).toEqual([true]);
  });
});

describe('affinity on a model with a reasoning switch', () => {
  let h: PluginHarness;
  beforeAll(async () => {
    h = await createPluginHarness({ plugins: PLUGINS, world: WORLD, llmConfig: join(__dirname, 'fixtures', 'qwen-fast.toml') });
  });
  afterAll(() => h.close());

  it('sends reasoning off (agent.reasoning: false → enable_thinking: false) with the forced tool choice', async () => {
    const request = (await h.turn('I slip into the river')).request('affinity');
    expect(request.model).toBe('qwen-plus');
    expect(request.body).toMatchObject({ enable_thinking: false, tool_choice: 'required' });
  });
});
