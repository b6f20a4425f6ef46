import { join } from 'node:path';
import { loadPlugin } from '../../../libs/plugins-sdk';
import {
  createPluginHarness,
  type HarnessTurn,
  type PluginHarness,
  CACHEABLE_PREFIX_MIN,
  UUID_PATTERN,
  prefixReuse,
  sharedPrefixTokens,
} from '../../../libs/plugin-testing';

jest.setTimeout(120_000);

const ROOT = join(__dirname, '..', '..', '..');
const PLUGINS = [join(ROOT, 'plugins', 'narrator'), join(__dirname, '..')];
const WORLD = join(ROOT, 'worlds', 'emberback');
const STORIES = ['Mira rows you across the Ash River.', 'Mira says she fears the dragon.', 'The bell rings <twice> & stops.', 'Snow falls.'];
const INPUTS = ['I board the ferry', 'I ask Mira what she fears', 'I listen', 'I wait'];

describe('world-ir manifest', () => {
  it('is a post-turn agent reading the narrative, with a required tool, no reasoning and maxTurns 0; off by default', () => {
    const plugin = loadPlugin(join(__dirname, '..'));
    expect(plugin.manifest.enabledByDefault).toBe(false);
    expect(plugin.manifest.contributes.extensions).toEqual([]); // it appends no segment
    expect(plugin.runtimes[0].manifest).toMatchObject({
      schedule: { stage: 'post-turn' },
      outputKind: 'none',
      io: { inputs: { story: { from: { contract: 'narrative-engine@2' }, cardinality: 'many' } } },
      agent: { tools: ['record-world-ir'], toolChoice: 'required', reasoning: false, history: { maxTurns: 0 } },
    });
    expect(plugin.runtimes[0].bodies['zh-Hans']).toMatch(/三元组/);
  });
});

describe('world-ir (contract, through the engine)', () => {
  let h: PluginHarness;
  const turns: HarnessTurn[] = [];
  beforeAll(async () => {
    h = await createPluginHarness({
      plugins: PLUGINS,
      world: WORLD,
      replies: {
        'narrator/narrator': STORIES,
        'world-ir/world-ir': [
          {
            tool: 'record-world-ir',
            args: { terms: [{ term: 'The Ash River', kind: 'place' }], facts: [{ subject: 'mira', predicate: 'rows across', object: 'The Ash River' }] },
          },
          // turn 2: a refused write (a fact on an unknown term), then the corrected one
          { tool: 'record-world-ir', args: { terms: [], facts: [{ subject: 'mira', predicate: 'fears', object: 'the dragon' }] } },
          { tool: 'record-world-ir', args: { terms: [], facts: [{ subject: 'mira', predicate: 'rows across', object: 'the ash river' }] } },
          // turn 3: "nothing new" is the same call with empty lists
          { tool: 'record-world-ir', args: { terms: [], facts: [] } },
          // turn 4: the emulator's own reply
        ],
      },
    });
    for (const text of INPUTS) turns.push(await h.turn(text));
  });
  afterAll(() => h.close());

  it('sends one user message it builds: roster, vocabulary, this turn’s story text, in that order', () => {
    turns.forEach((turn, i) => {
      const request = turn.request('world-ir');
      expect(request.messages.map((m) => m.role)).toEqual(['system', 'user']);
      const user = request.messages[1].content;
      const [roster, vocabulary, story] = ['<character-roster>', '<vocabulary>', '<story-text>'].map((tag) => user.indexOf(tag));
      expect(roster).toBe(0);
      expect(roster < vocabulary && vocabulary < story).toBe(true);
      expect(user).not.toContain(INPUTS[i]); // the player's input is not part of it
      expect(request.turnContext).toBe(''); // the turn context (its <runtime-inputs> included) was trimmed
      expect(request.segmentsOf('world-ir')).toEqual([]);
      expect(request.body.tool_choice).toBe('required');
      expect(request.toolNames).toEqual(['runtime-done', 'record-world-ir']);
    });
    const first = turns[0].request('world-ir').messages[1].content;
    expect(first).toContain('- ash | Ash [player]\n- mira | Mira (aka the ferrywoman)\n- tomas | Tomas Vell (aka the captain)');
    expect(first).toContain('<vocabulary>\n(no terms yet)\n</vocabulary>');
    expect(first).toContain(`<story-text>\n${STORIES[0]}\n</story-text>`);
    expect(turns[2].request('world-ir').messages[1].content).toContain('The bell rings &lt;twice&gt; &amp; stops.'); // data, escaped
  });

  it('leaves the other runtimes’ requests alone', () => {
    const narrator = turns[1].request('narrator');
    expect(narrator.messages.find((m) => m.section === 'player-input')?.content).toBe(INPUTS[1]);
    expect(narrator.messages.some((m) => m.content.includes('<character-roster>'))).toBe(false);
  });

  it('sends one request per turn: a successful record-world-ir ends the runtime, "nothing new" (empty lists) too', () => {
    expect(turns.map((t) => t.status)).toEqual(['committed', 'committed', 'committed', 'committed']);
    expect(turns.map((t) => t.requestsOf('world-ir').length)).toEqual([1, 2, 1, 1]);
    for (const i of [0, 1, 2])
      expect(
        turns[i]
          .eventsOf('tool.completed@1')
          .filter((e) => e.pluginId === 'world-ir' && e.ok)
          .map((e) => [e.name, e.done]),
      ).toEqual([['record-world-ir', true]]);
  });

  it('writes the vocabulary and facts after a scripted call; the next request lists the term; a fact on an unknown term keeps nothing', async () => {
    expect(await h.pluginData('world-ir', 'vocabulary')).toEqual([{ key: 'the-ash-river', value: { term: 'The Ash River', kind: 'place' } }]);
    expect(await h.pluginData('world-ir', 'facts')).toEqual([
      { key: 'turn-1', value: { facts: [{ subject: 'mira', predicate: 'rows across', object: 'The Ash River' }] } },
      { key: 'turn-2', value: { facts: [{ subject: 'mira', predicate: 'rows across', object: 'the ash river' }] } }, // only the corrected call
    ]);
    expect(turns[1].request('world-ir').messages[1].content).toContain('<vocabulary>\n- The Ash River [place]\n</vocabulary>');
    expect(
      turns[1]
        .eventsOf('tool.completed@1')
        .filter((e) => e.name === 'record-world-ir')
        .map((e) => [e.ok, e.errorCode ?? null]),
    ).toEqual([
      [false, 'TOOL_FAILED'],
      [true, null],
    ]);
    expect(
      turns[3]
        .eventsOf('tool.completed@1')
        .filter((e) => e.pluginId === 'world-ir')
        .map((e) => [e.name, e.done]),
    ).toEqual([['runtime-done', true]]);
  });

  it('each successful write has a one-line summary for the player: the facts counted, the new terms as written', () => {
    expect(turns.slice(0, 3).map((t) => t.toolSummaries('record-world-ir'))).toEqual([['1 fact, 1 new term (The Ash River)'], ['1 fact'], [undefined]]);
  });

  it('keeps the system prompt byte-identical, and the message prefix up to the story text while the vocabulary holds', async () => {
    const requests = turns.map((t) => t.request('world-ir'));
    expect(new Set(requests.map((r) => r.systemPrompt)).size).toBe(1);
    const prefix = (r: (typeof requests)[number]) => r.messages[1].content.slice(0, r.messages[1].content.indexOf('<story-text>'));
    expect(prefix(requests[1])).toBe(prefix(requests[2]));
    for (const r of requests) expect(r.systemPrompt + r.messages[1].content).not.toMatch(UUID_PATTERN);
    expect(await h.audit()).toMatchObject({ identical: true });
  });

  it('has a stable prefix (tool definitions, system prompt, roster) of at least 1,280 emulator tokens (1,024 + margin), which the emulator reads from cache', () => {
    for (const { sharedTokens, cachedTokens } of prefixReuse(turns, (t) => t.request('world-ir'))) {
      expect(sharedTokens).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_MIN);
      expect(cachedTokens).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_MIN);
    }
  });
});

describe('world-ir in a zh-Hans session', () => {
  let h: PluginHarness;
  beforeAll(async () => {
    h = await createPluginHarness({ plugins: PLUGINS, world: WORLD, locale: 'zh-Hans', replies: { 'narrator/narrator': '米拉划船送你过了灰烬河。' } });
  });
  afterAll(() => h.close());

  it('reads the Chinese body and markers', async () => {
    const request = (await h.turn('我上船')).request('world-ir');
    expect(sharedPrefixTokens(request, (await h.turn('我等着')).request('world-ir'))).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_MIN);
    expect(request.section('runtime-body')).toContain('把故事转成数据');
    expect(request.messages[1].content).toContain('- ash | Ash [player]');
    expect(request.messages[1].content).toContain('（尚无词汇）');
    expect(request.messages[1].content).toContain('米拉划船送你过了灰烬河。');
  });
});
