import { join } from 'node:path';
import { createPluginHarness, type HarnessTurn, type PluginHarness } from '../../../libs/plugin-testing';

jest.setTimeout(120_000);

const PLUGINS = [join(__dirname, '..', '..', 'narrator'), join(__dirname, '..')];
const EMBERBACK = join(__dirname, '..', '..', '..', 'worlds', 'emberback');

/**
 * The narrator's character sheets read the session's characters as char-creator keeps them (spec §4
 * "Writing that keeps the system prompt unchanged": the values of player.character and
 * characters.npcs "change as the story goes on"), published through `session.world-context@1`
 * `characters`: a field the tracker changed and a character it created reach the next narrator
 * request, and every request still rebuilds from the log.
 */
describe('char-creator → the narrator’s character sheets', () => {
  let h: PluginHarness;
  const turns: HarnessTurn[] = [];
  beforeAll(async () => {
    h = await createPluginHarness({
      plugins: PLUGINS,
      world: EMBERBACK,
      locale: 'en',
      replies: {
        'narrator/narrator': ['Mira smiles and waves you aboard; Old Bren watches from the far bank.', 'The ferry drifts.', 'Bren lifts his lantern.'],
        'char-creator/character-tracker': [
          // turn 1: a new character and a changed value, in one reply
          {
            tool: 'create-character',
            args: { id: 'bren', name: 'Old Bren', description: 'A lantern-keeper on the far bank.', fields: { health: 4, trust: 1 } },
          },
          {
            tool: 'update-character-fields',
            args: {
              updates: [
                { id: 'mira', fields: { trust: 3 } },
                { id: 'ash', fields: { warmth: 2 } },
              ],
            },
          },
          // turn 2: Bren's trust grows
          { tool: 'update-character-fields', args: { updates: [{ id: 'bren', fields: { trust: 2 } }] } },
          { tool: 'update-character-fields', args: { updates: [] } },
        ],
      },
    });
    for (const text of ['I ask Mira to take me across.', 'I sit down in the ferry.', 'I wave to Bren.']) turns.push(await h.turn(text));
  });
  afterAll(() => h.close());

  const narrator = (turn: HarnessTurn) => turn.request('narrator');

  it('turn 1 shows the world file’s values (nothing changed yet)', () => {
    expect(turns.map((t) => t.status)).toEqual(['committed', 'committed', 'committed']);
    expect(narrator(turns[0]).turnContext).toContain('"trust":"2/5"');
    expect(narrator(turns[0]).turnContext).not.toContain('Old Bren');
  });

  it('the next narrator request shows the changed values and the created character', () => {
    const context = narrator(turns[1]).turnContext;
    // Mira's trust as char-creator keeps it, with the schema's range; her aliases come from the world
    expect(context).toMatch(
      /Mira \(aka the ferrywoman\) \[npc\] \| The ferrywoman of the ash river; hears everything, says little\. \| \{[^\n]*"trust":"3\/5"/,
    );
    // the played character's sheet too
    expect(context).toMatch(/<player-character>\n\{"id":"ash",[^\n]*"warmth":"2\/5"/);
    // the created character, after the world's
    expect(context).toMatch(
      /Tomas Vell[^\n]*\nOld Bren \[npc\] \| A lantern-keeper on the far bank\. \| \{"health":"4\/10","trust":"1\/5"\}\n<\/character-profiles>/,
    );
    expect(narrator(turns[2]).turnContext).toContain('Old Bren [npc] | A lantern-keeper on the far bank. | {"health":"4/10","trust":"2/5"}');
  });

  it('the sheets stay out of the system prompt: the narrator’s system prompt is byte-identical across the turns', () => {
    expect(new Set(turns.map((t) => narrator(t).systemPrompt)).size).toBe(1);
  });

  it('the published characters are resolved once per execution and recorded, so a rebuild reads them without running a handler', () => {
    for (const turn of turns) {
      const published = turn
        .eventsOf('extension.resolved@1')
        .filter((e) => e.point === 'session.world-context@1' && e.pluginId === 'char-creator' && e.extensionId === 'characters');
      expect(published).toHaveLength(1);
    }
    const [second] = turns[1].eventsOf('extension.resolved@1').filter((e) => e.point === 'session.world-context@1' && e.pluginId === 'char-creator');
    expect(JSON.parse(second.result)).toEqual({
      characters: [
        {
          id: 'ash',
          name: 'Ash',
          type: 'player',
          description: 'A courier who arrived on the last caravan before the snows.',
          fields: expect.objectContaining({ warmth: 2 }),
        },
        { id: 'bren', name: 'Old Bren', type: 'npc', description: 'A lantern-keeper on the far bank.', fields: { health: 4, trust: 1 } },
        {
          id: 'mira',
          name: 'Mira',
          type: 'npc',
          description: 'The ferrywoman of the ash river; hears everything, says little.',
          fields: expect.objectContaining({ trust: 3 }),
        },
      ],
    });
  });

  it('every request rebuilds from the log byte for byte', async () => {
    expect(await h.audit()).toMatchObject({ identical: true });
  });
});
