import { join } from 'node:path';
import { createPluginHarness, type HarnessTurn, type PluginHarness, CACHEABLE_PREFIX_MIN, prefixReuse, sharedPrefixTokens } from '../../../libs/plugin-testing';

jest.setTimeout(120_000);

const PLUGINS = [join(__dirname, '..', '..', 'narrator'), join(__dirname, '..')];
const EMBERBACK = join(__dirname, '..', '..', '..', 'worlds', 'emberback');

const toolResults = (turn: HarnessTurn) =>
  turn.eventsOf('tool.completed@1').map((e) => ({ name: e.name, ok: e.ok, content: e.content, errorCode: e.errorCode, done: e.done }));
const outcomes = (turn: HarnessTurn) => toolResults(turn).map((r) => [r.name, r.ok, r.done]);
const rows = async (h: PluginHarness) => Object.fromEntries((await h.pluginData('char-creator', 'characters')).map((r) => [r.key, r.value]));
const tracker = (turn: HarnessTurn) => turn.request('char-creator', 'character-tracker');
const requests = (turn: HarnessTurn) => turn.requestsOf('char-creator', 'character-tracker').length;

const ROSTER = [
  '<existing-characters>',
  'Every character of this session, one per line: id | name | type | description.',
  '- ash | Ash | player | A courier who arrived on the last caravan before the snows.',
  '- mira | Mira | npc | The ferrywoman of the ash river; hears everything, says little.',
  '- tomas | Tomas Vell | npc | Captain of the Ember Wardens, keeper of the soot-black ledger.',
  '</existing-characters>',
].join('\n');

describe('char-creator (contract, through the engine)', () => {
  let h: PluginHarness;
  const turns: HarnessTurn[] = [];
  beforeAll(async () => {
    h = await createPluginHarness({
      plugins: PLUGINS,
      world: EMBERBACK,
      locale: 'en',
      replies: {
        'narrator/narrator': [
          'Mira smiles for the first time and waves you aboard.',
          'The ferry rocks; Mira knocks her knee on the rail.',
          'The ferry drifts; nothing else happens.',
          'An old man with a lantern, Old Bren, hails you from the far bank.',
          'Bren lights the way up the terraces.',
        ],
        'char-creator/character-tracker': [
          // turn 1: a write, which ends the runtime (one request)
          { tool: 'update-character-fields', args: { updates: [{ id: 'mira', fields: { trust: 3, status: 'ferrying the courier' } }] } },
          // turn 2: a refused write (a value out of range), then the corrected one
          {
            tool: 'update-character-fields',
            args: {
              updates: [
                { id: 'ash', fields: { warmth: 2 } },
                { id: 'mira', fields: { health: 12 } },
              ],
            },
          },
          { tool: 'update-character-fields', args: { updates: [{ id: 'mira', fields: { health: 8 } }] } },
          // turn 3: "no change" is the same call with an empty list (one request)
          { tool: 'update-character-fields', args: { updates: [] } },
          // turn 4: refused creations, a creation (which does not end the runtime), a refused update, the update that ends it
          { tool: 'create-character', args: { id: 'mira', name: 'Mira again', description: 'x' } },
          {
            tool: 'create-character',
            args: { id: 'bren', name: 'Old Bren', description: 'A lantern-keeper on the far bank.', fields: { health: 4, trust: 6 } },
          },
          { tool: 'create-character', args: { id: 'bren', name: 'Old Bren', description: 'A lantern-keeper on the far bank.', fields: { health: 4 } } },
          { tool: 'update-character-fields', args: { updates: [{ id: 'old-bren', fields: { status: 'lighting the way' } }] } },
          { tool: 'update-character-fields', args: { updates: [{ id: 'bren', fields: { status: 'lighting the way' } }] } },
          // turn 5
          { tool: 'update-character-fields', args: { updates: [] } },
        ],
      },
    });
    for (const text of ['I ask Mira to take me across.', 'I sit down in the ferry.', 'I wait.', 'I call back to the man with the lantern.', 'I follow Bren.'])
      turns.push(await h.turn(text));
  });
  afterAll(() => h.close());

  it('roster and schema in the system prompt (session), fields in the turn context (turn), only for itself; required tool, maxTurns 1', async () => {
    const request = tracker(turns[0]);
    expect(request.segmentsOf('char-creator').map((s) => [s.id, s.placement, s.volatility, s.audience])).toEqual([
      ['existing-characters', 'system-prompt', 'session', 'self'],
      ['character-schema', 'system-prompt', 'session', 'self'],
      ['character-fields-intro', 'system-prompt', 'session', 'self'],
      ['character-fields', 'turn-context', 'turn', 'self'],
    ]);
    expect(request.systemPrompt).toContain(ROSTER);
    expect(request.systemPrompt).toContain('- health | integer 0..10 | Wounds and weariness; 0 is unconscious.\n- warmth | integer 0..5 |');
    expect(request.systemPrompt).toContain('- trust | integer -5..5 | How far the village trusts the character.\n- status | string |');
    expect(request.turnContext).toContain('- mira | {"health":9,"warmth":4,"trust":2,"status":"mending a net by the landing"}');
    // spec §2 "Layout for bookkeeping runtimes": the constant line in the system prompt, only the values in the turn context
    expect(request.systemPrompt).toContain("<character-fields>, in the system message before the player's input: each character's current field values");
    expect(request.turnContext).toContain('<character-fields>\n- ash | ');
    expect(request.turnContext).not.toContain('current field values');
    expect(request.body.tool_choice).toBe('required');
    expect(((request.body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name)).toEqual([
      'runtime-done',
      'create-character',
      'update-character-fields',
    ]);
    expect(turns[0].request('narrator').segmentsOf('char-creator')).toEqual([]);
  });

  it('one request per turn: a write and "no change" (updates: []) each end the runtime with update-character-fields', async () => {
    expect(turns.map((t) => t.status)).toEqual(['committed', 'committed', 'committed', 'committed', 'committed']);
    expect(turns.map(requests)).toEqual([1, 2, 1, 5, 1]);
    expect(outcomes(turns[0])).toEqual([['update-character-fields', true, true]]);
    expect(outcomes(turns[2])).toEqual([['update-character-fields', true, true]]);
    expect(outcomes(turns[4])).toEqual([['update-character-fields', true, true]]);
    expect(tracker(turns[1]).turnContext).toContain('- mira | {"health":9,"warmth":4,"trust":3,"status":"ferrying the courier"}');
  });

  it('a refused write does not end the runtime and keeps nothing, not even its valid first update; the corrected write is kept and ends it', async () => {
    const [bad, corrected] = toolResults(turns[1]);
    expect([bad.ok, bad.errorCode, bad.done]).toEqual([false, 'TOOL_FAILED', undefined]);
    expect(bad.content).toContain('updates[1].fields.health: 12 is above the maximum 10 (range 0..10)');
    expect([corrected.ok, corrected.done]).toEqual([true, true]);
    // the refused call's update of ash was not kept; "no change" in turn 3 wrote nothing
    expect(Object.keys(await rows(h))).toEqual(['mira', 'bren']);
    expect(tracker(turns[2]).turnContext).toContain('- ash | {"health":8,"warmth":3,"trust":0,"status":"tired from the climb"}');
    expect(tracker(turns[2]).turnContext).toContain('- mira | {"health":8,"warmth":4,"trust":3,"status":"ferrying the courier"}');
  });

  it('create-character checks the id and the fields and does not end the runtime; the update after it (in the same reply, or the next request) does', async () => {
    expect(outcomes(turns[3])).toEqual([
      ['create-character', false, undefined],
      ['create-character', false, undefined],
      ['create-character', true, undefined],
      ['update-character-fields', false, undefined],
      ['update-character-fields', true, true],
    ]);
    const [duplicate, outOfRange, , unknown] = toolResults(turns[3]);
    expect(duplicate.content).toContain('id: a character \\"mira\\" exists already (Mira)');
    expect(outOfRange.content).toContain('fields.trust: 6 is above the maximum 5 (range -5..5)');
    // the character created a step earlier is already one of the characters
    expect(unknown.content).toContain('updates[0].id: no character \\"old-bren\\"; the characters are: ash, bren, mira, tomas');
    expect((await rows(h)).bren).toEqual({
      name: 'Old Bren',
      type: 'npc',
      description: 'A lantern-keeper on the far bank.',
      fields: { health: 4, status: 'lighting the way' },
    });
  });

  it('each successful write has a one-line summary for the player, naming characters by name', () => {
    const summaries = (turn: HarnessTurn) =>
      toolResults(turn).map((r) => (r.ok ? (JSON.parse(r.content) as { data: { summary?: string } }).data.summary : null));
    expect(summaries(turns[0])).toEqual(['Mira: trust 2 → 3, status mending a net by the landing → ferrying the courier']);
    expect(summaries(turns[1])).toEqual([null, 'Mira: health 9 → 8']);
    expect(summaries(turns[2])).toEqual([undefined]);
    expect(summaries(turns[3])).toEqual([null, null, 'New character: Old Bren', null, 'Old Bren: status — → lighting the way']);
  });

  it('the system prompt is byte-identical across every turn in which the roster did not change; a created character changes it from the next turn', () => {
    const prompts = turns.map((t) => tracker(t).systemPrompt);
    expect(new Set(prompts.slice(0, 4)).size).toBe(1);
    expect(prompts[4]).not.toBe(prompts[0]);
    expect(prompts[4]).toContain('- bren | Old Bren | npc | A lantern-keeper on the far bank.\n- mira | Mira | npc |');
    expect(tracker(turns[4]).turnContext).toContain('- bren | {"health":4,"status":"lighting the way"}');
    // maxTurns 1: the previous turn is the whole history
    expect(
      tracker(turns[1])
        .messages.filter((m) => m.section === 'history')
        .map((m) => m.content),
    ).toEqual(['I ask Mira to take me across.', 'Mira smiles for the first time and waves you aboard.']);
    expect(
      tracker(turns[4])
        .messages.filter((m) => m.section === 'history')
        .map((m) => m.content),
    ).toEqual(['I call back to the man with the lantern.', 'An old man with a lantern, Old Bren, hails you from the far bank.']);
  });

  it('has a stable prefix (tool definitions + system prompt) of at least 1,280 emulator tokens, which the emulator reads from cache from turn 2', () => {
    for (const { sharedTokens, cachedTokens } of prefixReuse(turns, tracker)) {
      expect(sharedTokens).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_MIN);
      expect(cachedTokens).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_MIN);
    }
  });

  it('every request rebuilds from the log byte for byte', async () => {
    expect(await h.audit()).toMatchObject({ identical: true });
  });
});

describe('char-creator in a zh-Hans Emberback session', () => {
  let h: PluginHarness;
  beforeAll(async () => {
    h = await createPluginHarness({ plugins: PLUGINS, world: EMBERBACK, locale: 'zh-Hans', replies: { 'narrator/narrator': '米拉把你从灰烬河里拉了上来。' } });
  });
  afterAll(() => h.close());

  it('reads the Chinese body; its stable prefix is read from cache too; the emulator default (runtime-done) ends the runtime in one request', async () => {
    const first = await h.turn('我跳进河里');
    const second = await h.turn('我等着');
    expect(tracker(first).section('runtime-body')).toContain('你负责记录故事中的角色');
    expect(sharedPrefixTokens(tracker(first), tracker(second))).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_MIN);
    expect(second.cachedTokens(tracker(second))).toBeGreaterThanOrEqual(CACHEABLE_PREFIX_MIN);
    for (const turn of [first, second]) expect(outcomes(turn)).toEqual([['runtime-done', true, true]]);
  });
});
