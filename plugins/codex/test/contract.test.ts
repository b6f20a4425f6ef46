import { join } from 'node:path';
import { foldKey as entryKey, loadPlugin } from '../../../libs/plugins-sdk';
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

const RIVER = { term: 'The Ash River', category: 'place', summary: 'A warm grey river that runs along the dragon’s flank.' };

describe('codex manifest and keys', () => {
  it('is a post-turn agent, off by default, forcing a tool choice with no history window, and declares its event', () => {
    const plugin = loadPlugin(join(__dirname, '..'));
    expect(plugin.manifest.enabledByDefault).toBe(false);
    expect(plugin.manifest.contributes.events.map((e) => e.topic)).toEqual(['codex.entry-discovered']);
    expect(plugin.runtimes[0].manifest).toMatchObject({
      schedule: { stage: 'post-turn', trigger: 'auto' },
      outputKind: 'none',
      agent: { tools: ['record-codex-entries'], toolChoice: 'required', reasoning: false, history: { maxTurns: 0 } },
    });
    expect(plugin.runtimes[0].bodies['zh-Hans']).toMatch(/词条/);
  });

  it('keys a term by code points, case and spacing folded', () => {
    expect(entryKey('  The  Ash River ')).toBe('the-ash-river');
    expect(entryKey('灰烬河')).toBe('灰烬河');
    const long = '🐉'.repeat(70);
    expect(Array.from(entryKey(long))).toHaveLength(64); // never half a surrogate pair
    expect(entryKey(long)).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
  });
});

describe('codex (contract, through the engine)', () => {
  let h: PluginHarness;
  const turns: HarnessTurn[] = [];
  beforeAll(async () => {
    h = await createPluginHarness({
      plugins: [...PLUGINS, join(__dirname, 'fixtures', 'codex-listener')],
      world: WORLD,
      // Emberback lists the plugins its sessions run; the test fixture that follows the event is not one of them
      sessionPlugins: ['narrator', 'codex', 'codex-listener'],
      replies: {
        'narrator/narrator': ['You wade into the Ash River; it is warm.', 'Mira points at the vents.', 'Nothing stirs.'],
        'codex/codex': [
          // turn 1: one write, which ends the runtime
          { tool: 'record-codex-entries', args: { entries: [RIVER] } },
          // turn 2: a refused write (a character among the entries), then the corrected one
          {
            tool: 'record-codex-entries',
            args: {
              entries: [
                { term: 'the vents', category: 'place', summary: 'Chimneys of the dragon’s breath.' },
                { term: 'the ferrywoman', category: 'other', summary: 'x' },
              ],
            },
          },
          { tool: 'record-codex-entries', args: { entries: [{ ...RIVER, term: 'the ash  river', summary: 'Warm, grey, and rising.' }] } },
          // turn 3: the emulator's own reply to `required` (runtime-done: "no change")
        ],
      },
    });
    for (const text of ['I wade into the river', 'I ask Mira about the vents', 'I wait']) turns.push(await h.turn(text));
  });
  afterAll(() => h.close());

  it('puts the scope (characters, categories) in a session segment and the entries in a turn segment', () => {
    const request = turns[0].request('codex');
    expect(request.segmentsOf('codex').map((s) => [s.id, s.volatility, s.placement])).toEqual([
      ['codex-scope', 'session', 'system-prompt'],
      ['codex-entries', 'turn', 'turn-context'],
    ]);
    expect(request.section('segments')).toContain('- Mira / the ferrywoman');
    expect(request.turnContext).toContain('(the codex is empty)');
    expect(request.body.tool_choice).toBe('required');
    expect(request.toolNames).toEqual(['runtime-done', 'record-codex-entries']);
    expect(request.messages.some((m) => m.section === 'history')).toBe(false);
    expect(request.messages.find((m) => m.section === 'story-text')?.content).toBe('You wade into the Ash River; it is warm.');
  });

  it('sends one request per turn: a successful record-codex-entries ends the runtime, as runtime-done does', () => {
    expect(turns.map((t) => t.status)).toEqual(['committed', 'committed', 'committed']);
    expect(turns.map((t) => t.requestsOf('codex').length)).toEqual([1, 2, 1]);
    expect(
      turns[0]
        .eventsOf('tool.completed@1')
        .filter((e) => e.pluginId === 'codex')
        .map((e) => [e.name, e.ok, e.done]),
    ).toEqual([['record-codex-entries', true, true]]);
  });

  it('writes the entry, announces it once with codex.entry-discovered, refuses a character, and updates by key', async () => {
    const first = turns[0].eventsOf('tool.completed@1').filter((e) => e.name === 'record-codex-entries');
    expect(first.map((e) => [e.ok, e.emittedTopics])).toEqual([[true, ['codex.entry-discovered']]]);
    expect(turns[1].request('codex').turnContext).toContain(
      '- the-ash-river | {"term":"The Ash River","category":"place","summary":"A warm grey river that runs along the dragon’s flank.","discoveredOnTurn":1}',
    );
    const second = turns[1].eventsOf('tool.completed@1').filter((e) => e.name === 'record-codex-entries');
    expect(second.map((e) => [e.ok, e.errorCode ?? null, e.emittedTopics ?? null, e.done ?? null])).toEqual([
      [false, 'TOOL_FAILED', null, null],
      [true, null, null, true], // an update announces nothing
    ]);
    expect(second[0].content).toContain('characters have their own records');
    expect(await h.pluginData('codex', 'entries')).toEqual([
      { key: 'the-ash-river', value: { term: 'the ash  river', category: 'place', summary: 'Warm, grey, and rising.', discoveredOnTurn: 1 } },
    ]);
    const activations = (await h.events()).filter((e) => e.type === 'runtime.activated@1').map((e) => e.data as { topic?: string; payload: unknown });
    expect(activations).toEqual([
      expect.objectContaining({ topic: 'codex.entry-discovered', payload: { entries: [{ key: 'the-ash-river', term: 'The Ash River', category: 'place' }] } }),
    ]);
  });

  it('each successful write has a one-line summary for the player: the term as written, new or updated', () => {
    expect(turns.slice(0, 2).map((t) => t.toolSummaries('record-codex-entries'))).toEqual([['Codex: The Ash River (new)'], ['Codex: the ash river (updated)']]);
  });

  it('ends cleanly on the emulator default, keeps the system prompt byte-identical, and no ids in the prompt', async () => {
    expect(
      turns[2]
        .eventsOf('tool.completed@1')
        .filter((e) => e.pluginId === 'codex')
        .map((e) => [e.name, e.done]),
    ).toEqual([['runtime-done', true]]);
    expect(new Set(turns.map((t) => t.request('codex').systemPrompt)).size).toBe(1);
    for (const turn of turns) expect(turn.request('codex').systemPrompt + turn.request('codex').turnContext).not.toMatch(UUID_PATTERN);
    expect(await h.audit()).toMatchObject({ identical: true });
  });

  it('has a stable prefix (tool definitions + system prompt) of at least 1,280 emulator tokens (1,024 + margin), which the emulator reads from cache', () => {
    for (const { sharedTokens, cachedTokens } of prefixReuse(turns, (t) => t.request('codex'))) {
      expect(sharedTokens).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_MIN);
      expect(cachedTokens).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_MIN);
    }
  });
});

describe('codex in a zh-Hans session', () => {
  let h: PluginHarness;
  beforeAll(async () => {
    h = await createPluginHarness({ plugins: PLUGINS, world: WORLD, locale: 'zh-Hans', replies: { 'narrator/narrator': '你走进了灰烬河。' } });
  });
  afterAll(() => h.close());

  it('reads the Chinese body and segment text', async () => {
    const request = (await h.turn('我走进河里')).request('codex');
    expect(sharedPrefixTokens(request, (await h.turn('我等着')).request('codex'))).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_MIN);
    expect(request.section('runtime-body')).toContain('词条集');
    expect(request.section('segments')).toContain('以下是有自己记录的角色');
    expect(request.turnContext).toContain('（词条集为空）');
  });
});
