import { join } from 'node:path';
import { loadPlugin } from '../../../libs/plugins-sdk';
import { createPluginHarness, type HarnessTurn, type PluginHarness } from '../../../libs/plugins-sdk/testing';

jest.setTimeout(120_000);

const ROOT = join(__dirname, '..', '..', '..');
const PLUGINS = [join(ROOT, 'plugins', 'narrator'), join(__dirname, '..')];
const WORLD = join(ROOT, 'worlds', 'emberback');
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const ISO_TIME = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;

const toolNames = (body: Record<string, unknown>) => ((body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);

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
          { tool: 'update-affinity', args: { updates: [{ character: 'mira', score: 3, feeling: 'amused, protective' }] } },
          'Recorded.',
          { tool: 'update-affinity', args: { updates: [{ character: 'nobody', score: 1, feeling: 'x' }] } },
          { tool: 'update-affinity', args: { updates: [] } },
          'Nothing changed.',
        ],
      },
    });
    for (const text of ['I slip into the river', 'I go to the watchtower', 'I wait']) turns.push(await h.turn(text));
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
      expect(toolNames(request.body)).toEqual(['runtime-done', 'update-affinity']);
      expect(request.messages.some((m) => m.section === 'history')).toBe(false);
    }
    const second = turns[1].request('affinity');
    expect(second.messages.find((m) => m.section === 'story-text')?.content).toBe('Tomas writes your name in the ledger.');
    expect(second.messages.map((m) => m.content).join('\n')).not.toContain('Mira pulls you from the ash river');
  });

  it('writes the scripted update to plugin data and shows it in the next turn context; a bad update keeps nothing', async () => {
    expect(await h.pluginData('affinity', 'scores')).toEqual([{ key: 'mira', value: { score: 3, feeling: 'amused, protective' } }]);
    expect(turns[1].request('affinity').turnContext).toContain('- mira | {"score":3,"feeling":"amused, protective"}');
    const outcomes = turns[1].eventsOf('tool.completed@1').filter((e) => e.name === 'update-affinity');
    expect(outcomes.map((o) => [o.ok, o.errorCode])).toEqual([
      [false, 'TOOL_FAILED'],
      [true, undefined],
    ]);
    // the third turn ran on the emulator's own reply to `required` and ended cleanly with runtime-done
    expect(
      turns[2]
        .eventsOf('tool.completed@1')
        .filter((e) => e.pluginId === 'affinity')
        .map((o) => [o.name, o.done]),
    ).toEqual([['runtime-done', true]]);
  });

  it('keeps the system prompt byte-identical across turns, and no ids or times in the prompt', async () => {
    const prompts = turns.map((t) => t.request('affinity').systemPrompt);
    expect(new Set(prompts).size).toBe(1);
    for (const turn of turns) {
      const r = turn.request('affinity');
      for (const text of [r.systemPrompt, r.turnContext]) {
        expect(text).not.toMatch(UUID);
        expect(text).not.toMatch(ISO_TIME);
      }
    }
    expect(await h.audit()).toMatchObject({ identical: true });
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
