import { join } from 'node:path';
import { loadPlugin } from '../../../libs/plugins-sdk';
import { createPluginHarness, type HarnessTurn, type PluginHarness } from '../../../libs/plugins-sdk/testing';

jest.setTimeout(120_000);

const ROOT = join(__dirname, '..', '..', '..');
const PLUGINS = [join(ROOT, 'plugins', 'narrator'), join(__dirname, '..')];
const WORLD = join(ROOT, 'worlds', 'emberback');
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const toolNames = (body: Record<string, unknown>) => ((body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);

describe('npc-graph manifest', () => {
  it('has one child runtime, extractor: post-turn, required tool choice, no reasoning, maxTurns 0; off by default', () => {
    const plugin = loadPlugin(join(__dirname, '..'));
    expect(plugin.manifest.enabledByDefault).toBe(false);
    expect(plugin.runtimes.map((r) => [r.fullId, r.inline])).toEqual([['npc-graph/extractor', false]]);
    expect(plugin.runtimes[0].manifest).toMatchObject({
      schedule: { stage: 'post-turn', trigger: 'auto' },
      outputKind: 'none',
      agent: { tools: ['set-relations'], toolChoice: 'required', reasoning: false, history: { maxTurns: 0 } },
    });
    expect(plugin.runtimes[0].bodies['zh-Hans']).toMatch(/关系/);
  });
});

describe('npc-graph/extractor (contract, through the engine)', () => {
  let h: PluginHarness;
  const turns: HarnessTurn[] = [];
  beforeAll(async () => {
    h = await createPluginHarness({
      plugins: PLUGINS,
      world: WORLD,
      replies: {
        'narrator/narrator': ['Mira tells Tomas she will not pay his toll.', 'Tomas forgives the toll.', 'The bell rings.'],
        'npc-graph/extractor': [
          {
            tool: 'set-relations',
            args: {
              relations: [
                { from: 'mira', to: 'tomas', relation: 'refuses his toll' },
                { from: 'tomas', to: 'ash', relation: 'suspicious of the courier' },
              ],
            },
          },
          'Recorded.',
          { tool: 'set-relations', args: { relations: [{ from: 'mira', to: 'mira', relation: 'x' }] } },
          { tool: 'set-relations', args: { relations: [{ from: 'mira', to: 'tomas', relation: null }] } },
          'Recorded.',
        ],
      },
    });
    for (const text of ['I watch the quarrel', 'I ask Tomas to let it go', 'I wait']) turns.push(await h.turn(text));
  });
  afterAll(() => h.close());

  it('puts the roster in a session segment and the relations in a turn segment; required tool choice; no history', () => {
    for (const turn of turns) {
      const request = turn.request('npc-graph', 'extractor');
      expect(request.segmentsOf('npc-graph').map((s) => [s.id, s.volatility, s.placement])).toEqual([
        ['npc-graph-characters', 'session', 'system-prompt'],
        ['npc-graph-relations', 'turn', 'turn-context'],
      ]);
      expect(request.body.tool_choice).toBe('required');
      expect(toolNames(request.body)).toEqual(['runtime-done', 'set-relations']);
      expect(request.messages.some((m) => m.section === 'history')).toBe(false);
    }
    const first = turns[0].request('npc-graph', 'extractor');
    expect(first.section('segments')).toContain('- ash | Ash [player]');
    expect(first.section('segments')).toContain('- mira | Mira (aka the ferrywoman)');
    expect(first.turnContext).toContain('(none recorded yet)');
  });

  it('writes relations after a scripted call, shows them next turn, refuses a self-relation, removes on null', async () => {
    expect(turns[1].request('npc-graph', 'extractor').turnContext).toContain(
      ['- mira -> tomas | refuses his toll', '- tomas -> ash | suspicious of the courier'].join('\n'),
    );
    const second = turns[1].eventsOf('tool.completed@1').filter((e) => e.name === 'set-relations');
    expect(second.map((e) => [e.ok, e.errorCode ?? null])).toEqual([
      [false, 'TOOL_FAILED'],
      [true, null],
    ]);
    expect(await h.pluginData('npc-graph', 'relations')).toEqual([
      { key: 'tomas->ash', value: { from: 'tomas', to: 'ash', relation: 'suspicious of the courier' } },
    ]);
    expect(turns[2].request('npc-graph', 'extractor').turnContext).not.toContain('mira -> tomas');
  });

  it('ends cleanly on the emulator default; the system prompt is byte-identical; no ids in the prompt', async () => {
    expect(
      turns[2]
        .eventsOf('tool.completed@1')
        .filter((e) => e.pluginId === 'npc-graph')
        .map((e) => [e.name, e.done]),
    ).toEqual([['runtime-done', true]]);
    const requests = turns.map((t) => t.request('npc-graph', 'extractor'));
    expect(new Set(requests.map((r) => r.systemPrompt)).size).toBe(1);
    for (const r of requests) expect(r.systemPrompt + r.turnContext).not.toMatch(UUID);
    expect(await h.audit()).toMatchObject({ identical: true });
  });
});

describe('npc-graph in a zh-Hans session', () => {
  let h: PluginHarness;
  beforeAll(async () => {
    h = await createPluginHarness({ plugins: PLUGINS, world: WORLD, locale: 'zh-Hans', replies: { 'narrator/narrator': '米拉拒绝付托马斯的通行费。' } });
  });
  afterAll(() => h.close());

  it('reads the Chinese body and segment text', async () => {
    const request = (await h.turn('我看着他们争吵')).request('npc-graph', 'extractor');
    expect(request.section('runtime-body')).toContain('关系的图谱');
    expect(request.section('segments')).toContain('- ash | Ash [player]');
    expect(request.turnContext).toContain('（尚无记录）');
  });
});
