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

jest.setTimeout(120_000);

const ROOT = join(__dirname, '..', '..', '..');
const PLUGINS = [join(ROOT, 'plugins', 'narrator'), join(__dirname, '..')];
const WORLD = join(ROOT, 'worlds', 'emberback');

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
          // turn 2: a refused write (a self-relation), then the corrected one
          {
            tool: 'set-relations',
            args: {
              relations: [
                { from: 'tomas', to: 'mira', relation: 'forgives her the toll' },
                { from: 'mira', to: 'mira', relation: 'x' },
              ],
            },
          },
          { tool: 'set-relations', args: { relations: [{ from: 'mira', to: 'tomas', relation: null }] } },
          // turn 3: "no change" is the same call with an empty list
          { tool: 'set-relations', args: { relations: [] } },
          // turn 4: the emulator's own reply
        ],
      },
    });
    for (const text of ['I watch the quarrel', 'I ask Tomas to let it go', 'I wait', 'I wait again']) turns.push(await h.turn(text));
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
      expect(request.toolNames).toEqual(['runtime-done', 'set-relations']);
      expect(request.messages.some((m) => m.section === 'history')).toBe(false);
    }
    const first = turns[0].request('npc-graph', 'extractor');
    expect(first.section('segments')).toContain('- ash | Ash [player]');
    expect(first.section('segments')).toContain('- mira | Mira (aka the ferrywoman)');
    expect(first.turnContext).toContain('(none recorded yet)');
  });

  it('sends one request per turn: a successful set-relations ends the runtime, "no change" ([]) too', () => {
    expect(turns.map((t) => t.status)).toEqual(['committed', 'committed', 'committed', 'committed']);
    expect(turns.map((t) => t.requestsOf('npc-graph', 'extractor').length)).toEqual([1, 2, 1, 1]);
    for (const i of [0, 2])
      expect(
        turns[i]
          .eventsOf('tool.completed@1')
          .filter((e) => e.pluginId === 'npc-graph')
          .map((e) => [e.name, e.ok, e.done]),
      ).toEqual([['set-relations', true, true]]);
  });

  it('writes relations after a scripted call, shows them next turn, refuses a self-relation, removes on null', async () => {
    expect(turns[1].request('npc-graph', 'extractor').turnContext).toContain(
      ['- mira -> tomas | refuses his toll', '- tomas -> ash | suspicious of the courier'].join('\n'),
    );
    const second = turns[1].eventsOf('tool.completed@1').filter((e) => e.name === 'set-relations');
    expect(second.map((e) => [e.ok, e.errorCode ?? null, e.done ?? null])).toEqual([
      [false, 'TOOL_FAILED', null],
      [true, null, true],
    ]);
    expect(await h.pluginData('npc-graph', 'relations')).toEqual([
      { key: 'tomas->ash', value: { from: 'tomas', to: 'ash', relation: 'suspicious of the courier' } },
    ]);
    expect(turns[2].request('npc-graph', 'extractor').turnContext).not.toContain('mira -> tomas');
  });

  it('each successful write has a one-line summary for the player, characters by name; a removal and "no change" say so', () => {
    expect(turns.slice(0, 3).map((t) => t.toolSummaries('set-relations'))).toEqual([
      ['Mira → Tomas Vell: refuses his toll; Tomas Vell → Ash: suspicious of the courier'],
      ['Mira → Tomas Vell: (removed)'],
      [undefined],
    ]);
  });

  it('ends cleanly on the emulator default; the system prompt is byte-identical; no ids in the prompt', async () => {
    expect(
      turns[3]
        .eventsOf('tool.completed@1')
        .filter((e) => e.pluginId === 'npc-graph')
        .map((e) => [e.name, e.done]),
    ).toEqual([['runtime-done', true]]);
    const requests = turns.map((t) => t.request('npc-graph', 'extractor'));
    expect(new Set(requests.map((r) => r.systemPrompt)).size).toBe(1);
    for (const r of requests) expect(r.systemPrompt + r.turnContext).not.toMatch(UUID_PATTERN);
    expect(await h.audit()).toMatchObject({ identical: true });
  });

  it('has a stable prefix (tool definitions + system prompt) of at least 1,280 emulator tokens (1,024 + margin), which the emulator reads from cache', () => {
    for (let i = 1; i < turns.length; i++) {
      const [before, after] = [turns[i - 1].request('npc-graph', 'extractor'), turns[i].request('npc-graph', 'extractor')];
      expect(sharedPrefixTokens(before, after)).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_MIN);
      expect(turns[i].cachedTokens(after)).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_MIN);
    }
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
    expect(sharedPrefixTokens(request, (await h.turn('我等着')).request('npc-graph', 'extractor'))).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_MIN);
    expect(request.section('runtime-body')).toContain('关系的图谱');
    expect(request.section('segments')).toContain('- ash | Ash [player]');
    expect(request.turnContext).toContain('（尚无记录）');
  });
});
