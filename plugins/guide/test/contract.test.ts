import { join } from 'node:path';
import { loadPlugin } from '../../../libs/plugins-sdk';
import { createPluginHarness, type HarnessTurn, type PluginHarness, CACHEABLE_PREFIX_MIN, prefixReuse, sharedPrefixTokens } from '../../../libs/plugin-testing';

jest.setTimeout(120_000);

const ROOT = join(__dirname, '..', '..', '..');
const PLUGINS = [join(ROOT, 'plugins', 'narrator'), join(__dirname, '..')];
const WORLD = join(ROOT, 'worlds', 'emberback');
const STORIES = ['First: the caravan leaves.', 'Second: Mira rows you across.', 'Third: the watchtower bell.', 'Fourth: snow on the vents.'];
const RECAP = { recap: 'You crossed the ash river with Mira.', hint: 'Ask Tomas about the tremors.' };

describe('guide manifest', () => {
  it('is a post-turn structured runtime with a two-turn window and summaries, no tools, no reasoning; off by default', () => {
    const plugin = loadPlugin(join(__dirname, '..'));
    expect(plugin.manifest.enabledByDefault).toBe(false);
    const runtime = plugin.runtimes[0].manifest;
    expect(runtime).toMatchObject({
      schedule: { stage: 'post-turn' },
      outputKind: 'structured',
      agent: { tools: [], reasoning: false, history: { maxTurns: 2, includeSummaries: true } },
    });
    expect(runtime.agent?.toolChoice).toBeUndefined();
    expect(runtime.output.schema).toMatchObject({ required: ['recap', 'hint'] });
    expect(plugin.runtimes[0].bodies['zh-Hans']).toMatch(/向导/);
  });
});

describe('guide (contract, through the engine)', () => {
  let h: PluginHarness;
  const turns: HarnessTurn[] = [];
  beforeAll(async () => {
    h = await createPluginHarness({
      plugins: PLUGINS,
      world: WORLD,
      replies: { 'narrator/narrator': STORIES, 'guide/guide': [{ json: RECAP }] },
    });
    for (const text of ['I leave', 'I cross', 'I climb', 'I look up']) turns.push(await h.turn(text));
  });
  afterAll(() => h.close());

  it('answers with its JSON as a structured output that never becomes story text', () => {
    expect(turns[0].outputJson('guide', 'guide')).toEqual(RECAP);
    expect(turns[0].story).toBe(STORIES[0]);
    // the narrator's history never shows the guide's output
    const narrator = turns[1].request('narrator');
    expect(narrator.messages.map((m) => m.content).join('\n')).not.toContain('Ask Tomas about the tremors');
    // later turns ran on the emulator's own answer to the output schema and still completed
    expect(turns[3].outputJson('guide', 'guide')).toMatchObject({ recap: expect.any(String), hint: expect.any(String) });
  });

  it('reads the last two turns and this turn’s story text (maxTurns 2), with no tool forced', () => {
    const request = turns[3].request('guide');
    const history = request.messages.filter((m) => m.section === 'history').map((m) => m.content);
    expect(history).toEqual(expect.arrayContaining(['I cross', STORIES[1], 'I climb', STORIES[2]]));
    expect(history.join('\n')).not.toContain(STORIES[0]);
    expect(request.messages.find((m) => m.section === 'story-text')?.content).toBe(STORIES[3]);
    expect(request.body.tool_choice).toBeUndefined();
    expect(request.body.tools).toBeUndefined();
  });

  it('keeps the system prompt byte-identical across turns', async () => {
    expect(new Set(turns.map((t) => t.request('guide').systemPrompt)).size).toBe(1);
    expect(await h.audit()).toMatchObject({ identical: true });
  });

  it('sends one request per turn, whose stable prefix (the system prompt) is at least 1,280 emulator tokens (1,024 + margin), read from cache', () => {
    expect(turns.map((t) => t.requestsOf('guide').length)).toEqual([1, 1, 1, 1]);
    for (const { sharedTokens, cachedTokens } of prefixReuse(turns, (t) => t.request('guide'))) {
      expect(sharedTokens).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_MIN);
      expect(cachedTokens).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_MIN);
    }
  });
});

describe('guide in a zh-Hans session', () => {
  let h: PluginHarness;
  beforeAll(async () => {
    h = await createPluginHarness({ plugins: PLUGINS, world: WORLD, locale: 'zh-Hans', replies: { 'narrator/narrator': '商队出发了。' } });
  });
  afterAll(() => h.close());

  it('reads the Chinese body', async () => {
    const turn = await h.turn('我出发');
    expect(sharedPrefixTokens(turn.request('guide'), (await h.turn('我等着')).request('guide'))).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_MIN);
    expect(turn.request('guide').section('runtime-body')).toContain('玩家的向导');
    expect(turn.story).toBe('商队出发了。');
  });
});
