import { join } from 'node:path';
import { createPluginHarness, type PluginHarness, type HarnessTurn } from '../../../libs/plugins-sdk/testing';

jest.setTimeout(120_000);

const PLUGINS = [join(__dirname, '..', '..', 'narrator'), join(__dirname, '..')];
const EMBERBACK = join(__dirname, '..', '..', '..', 'worlds', 'emberback');

const toolResults = (turn: HarnessTurn) => turn.eventsOf('tool.completed@1').map((e) => ({ name: e.name, ok: e.ok, content: e.content }));
const rows = async (h: PluginHarness) => Object.fromEntries((await h.pluginData('char-creator', 'characters')).map((r) => [r.key, r.value]));

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
  const systemPrompts: string[] = [];
  beforeAll(async () => {
    h = await createPluginHarness({
      plugins: PLUGINS,
      world: EMBERBACK,
      locale: 'en',
      replies: {
        'narrator/narrator': [
          'Mira smiles for the first time and waves you aboard.',
          'The ferry rocks; nothing else happens.',
          'An old man with a lantern, Old Bren, hails you from the far bank.',
          'Bren lights the way up the terraces.',
        ],
        'char-creator/character-tracker': [
          // turn 1: one field changes
          { tool: 'update-character-fields', args: { updates: [{ id: 'mira', fields: { trust: 3, status: 'ferrying the courier' } }] } },
          { tool: 'runtime-done', args: {} },
          // turn 2: a bad value and an unknown character are tool errors; no change is an empty update
          {
            tool: 'update-character-fields',
            args: {
              updates: [
                { id: 'ash', fields: { warmth: 2 } },
                { id: 'mira', fields: { health: 12 } },
              ],
            },
          },
          { tool: 'update-character-fields', args: { updates: [{ id: 'bren', fields: { health: 5 } }] } },
          { tool: 'update-character-fields', args: { updates: [] } },
          { tool: 'runtime-done', args: {} },
          // turn 3: a new character
          { tool: 'create-character', args: { id: 'mira', name: 'Mira again', description: 'x' } },
          {
            tool: 'create-character',
            args: { id: 'bren', name: 'Old Bren', description: 'A lantern-keeper on the far bank.', fields: { health: 4, trust: 6 } },
          },
          { tool: 'create-character', args: { id: 'bren', name: 'Old Bren', description: 'A lantern-keeper on the far bank.', fields: { health: 4 } } },
          { tool: 'runtime-done', args: {} },
          // turn 4
          { tool: 'update-character-fields', args: { updates: [] } },
          { tool: 'runtime-done', args: {} },
        ],
      },
    });
  });
  afterAll(() => h.close());

  it('turn 1: roster and schema in the system prompt (session), fields in the turn context (turn), only for itself; required tool, maxTurns 1', async () => {
    const turn = await h.turn('I ask Mira to take me across.');
    const tracker = turn.request('char-creator', 'character-tracker');
    systemPrompts.push(tracker.systemPrompt);
    expect(tracker.segmentsOf('char-creator').map((s) => [s.id, s.placement, s.volatility, s.audience])).toEqual([
      ['existing-characters', 'system-prompt', 'session', 'self'],
      ['character-schema', 'system-prompt', 'session', 'self'],
      ['character-fields', 'turn-context', 'turn', 'self'],
    ]);
    expect(tracker.systemPrompt).toContain(ROSTER);
    expect(tracker.systemPrompt).toContain('- health | integer 0..10 | Wounds and weariness; 0 is unconscious.\n- warmth | integer 0..5 |');
    expect(tracker.systemPrompt).toContain('- trust | integer -5..5 | How far the village trusts the character.\n- status | string |');
    expect(tracker.turnContext).toContain('- mira | {"health":9,"warmth":4,"trust":2,"status":"mending a net by the landing"}');
    expect(tracker.systemPrompt).not.toContain('"trust":2');
    expect(tracker.body.tool_choice).toBe('required');
    expect(turn.request('narrator').segmentsOf('char-creator')).toEqual([]);

    expect(toolResults(turn)[0]).toMatchObject({ name: 'update-character-fields', ok: true });
    expect((await rows(h)).mira).toEqual({
      name: 'Mira',
      type: 'npc',
      description: 'The ferrywoman of the ash river; hears everything, says little.',
      fields: { health: 9, warmth: 4, trust: 3, status: 'ferrying the courier' },
    });
  });

  it('turn 2: the changed field shows in the turn context while the roster — the whole system prompt — stays byte-identical; bad values are tool errors naming the field', async () => {
    const turn = await h.turn('I sit down in the ferry.');
    const tracker = turn.request('char-creator', 'character-tracker');
    systemPrompts.push(tracker.systemPrompt);
    expect(tracker.systemPrompt).toBe(systemPrompts[0]);
    expect(tracker.turnContext).toContain('- mira | {"health":9,"warmth":4,"trust":3,"status":"ferrying the courier"}');
    // maxTurns 1: the previous turn is in the history
    expect(tracker.messages.filter((m) => m.section === 'history').map((m) => m.content)).toEqual([
      'I ask Mira to take me across.',
      'Mira smiles for the first time and waves you aboard.',
    ]);
    const [bad, unknown, none] = toolResults(turn);
    expect(bad.ok).toBe(false);
    expect(bad.content).toContain('updates[1].fields.health: 12 is above the maximum 10 (range 0..10)');
    expect(unknown.ok).toBe(false);
    expect(unknown.content).toContain('updates[0].id: no character \\"bren\\"; the characters are: ash, mira, tomas');
    expect(none).toMatchObject({ name: 'update-character-fields', ok: true });
    // the failed call wrote nothing, not even its valid first update
    expect(Object.keys(await rows(h))).toEqual(['mira']);
  });

  it('turn 3: create-character checks the id and the fields; the created character is kept', async () => {
    const turn = await h.turn('I call back to the man with the lantern.');
    systemPrompts.push(turn.request('char-creator', 'character-tracker').systemPrompt);
    const [duplicate, outOfRange, created] = toolResults(turn);
    expect(duplicate.content).toContain('id: a character \\"mira\\" exists already (Mira)');
    expect(outOfRange.content).toContain('fields.trust: 6 is above the maximum 5 (range -5..5)');
    expect(created).toMatchObject({ name: 'create-character', ok: true });
    expect((await rows(h)).bren).toEqual({ name: 'Old Bren', type: 'npc', description: 'A lantern-keeper on the far bank.', fields: { health: 4 } });
    expect(systemPrompts[2]).toBe(systemPrompts[0]);
  });

  it('turn 4: the roster has changed (a character was created), so the system prompt may change; the history window is one turn; every request rebuilds', async () => {
    const turn = await h.turn('I follow Bren.');
    const tracker = turn.request('char-creator', 'character-tracker');
    expect(tracker.systemPrompt).not.toBe(systemPrompts[0]);
    expect(tracker.systemPrompt).toContain('- bren | Old Bren | npc | A lantern-keeper on the far bank.\n- mira | Mira | npc |');
    expect(tracker.turnContext).toContain('- bren | {"health":4}');
    expect(tracker.messages.filter((m) => m.section === 'history').map((m) => m.content)).toEqual([
      'I call back to the man with the lantern.',
      'An old man with a lantern, Old Bren, hails you from the far bank.',
    ]);
    expect(await h.audit()).toMatchObject({ identical: true });
  });
});
