import { join } from 'node:path';
import { estimateTokens } from '../../../libs/context';
import { createPluginHarness, type InlineWorld, type PluginHarness } from '../../../libs/plugin-testing';

jest.setTimeout(60_000);

const PLUGIN = join(__dirname, '..');
const NARRATOR = join(__dirname, '..', '..', 'narrator');
const CHAT_MODE = join(__dirname, '..', '..', 'chat-mode-narrator');
const BOOKKEEPER = join(__dirname, 'fixtures', 'bookkeeper');
const EMBERBACK = join(__dirname, '..', '..', '..', 'worlds', 'emberback');

const notesOf = (request: { segmentsOf(id: string): readonly { id: string; placement: string; volatility: string; audience?: unknown; content: string }[] }) =>
  request.segmentsOf('character-blueprint');

async function withHarness(world: InlineWorld | string, locale: string, run: (h: PluginHarness) => Promise<void>): Promise<void> {
  const h = await createPluginHarness({ plugins: [PLUGIN, NARRATOR], world, locale, replies: { 'narrator/narrator': 'The story goes on.' } });
  try {
    await run(h);
  } finally {
    await h.close();
  }
}

describe('character-blueprint (contract, through the engine)', () => {
  describe('Emberback, en, beside both narrators and a bookkeeping runtime', () => {
    let h: PluginHarness;
    beforeAll(async () => {
      h = await createPluginHarness({
        plugins: [PLUGIN, NARRATOR, CHAT_MODE, BOOKKEEPER],
        world: EMBERBACK,
        replies: { 'bookkeeper/tally': { json: { ok: true } }, default: 'Mira looks up from her net.' },
      });
    });
    afterAll(() => h.close());

    it('<character-notes> is a session segment in the system prompt of every story runtime, and of no other', async () => {
      const turns = [await h.turn('I walk down to the landing'), await h.turn('Ask Mira about the ferry')];
      for (const turn of turns) {
        for (const pluginId of ['narrator', 'chat-mode-narrator']) {
          const request = turn.request(pluginId);
          const segments = notesOf(request);
          expect(segments.map((s) => [s.id, s.placement, s.volatility, s.audience])).toEqual([['character-notes', 'system-prompt', 'session', 'story']]);
          const notes = segments[0].content;
          expect(request.section('segments')).toContain(notes);
          expect(request.turnContext).not.toContain('<character-notes>');
          // the session's characters but not the player's (Ash), sorted by id: mira before tomas
          expect(notes).toContain(
            [
              '## Mira (aka the ferrywoman)',
              '- Tone: dry, unhurried, a little amused',
              '- Manner: answers questions with questions; never names a price first',
              '- Personality: patient, observant, loyal to the river more than to the village',
              '- Goals:',
              '  - keep the ferry running through the winter',
              '  - learn why the river runs warmer',
              '- Fears:',
              '  - the dragon waking while she is mid-river',
              '- Secrets:',
              // the world's YAML flow list splits this secret at its comma: the notes keep the items as the world has them
              "  - she has seen the dragon's eye open once, and told no one",
            ].join('\n'),
          );
          expect(notes).toContain('- Relationships:\n  - Tomas Vell: owes him a favour she would rather forget');
          expect(notes).toContain("- Sample lines:\n  - The river takes what it's owed. What do you owe, courier?");
          expect(notes.indexOf('## Mira')).toBeLessThan(notes.indexOf('## Tomas Vell (aka the captain)'));
          expect(notes).not.toContain('## Ash');
          expect(notes).not.toContain('Shortened');
          expect(estimateTokens(notes)).toBeLessThanOrEqual(6000);
        }
        expect(notesOf(turn.request('bookkeeper', 'tally'))).toEqual([]);
        expect(turn.request('bookkeeper', 'tally').systemPrompt).not.toContain('<character-notes>');
      }
      // stable within the session: the system prompt (notes included) is byte-identical across turns
      expect(turns[0].request('narrator').systemPrompt).toBe(turns[1].request('narrator').systemPrompt);
      expect(turns[0].request('chat-mode-narrator').systemPrompt).toBe(turns[1].request('chat-mode-narrator').systemPrompt);
      expect(await h.audit()).toMatchObject({ identical: true });
    });
  });

  it('leaves out the player-controlled characters (the primary seat’s, another seat’s, type player) and sorts by id, not by name or file order', async () => {
    const world: InlineWorld = {
      name: 'Two Seats',
      characters: [
        { id: 'zed', name: 'Aaron Zed', blueprint: { tone: 'ZED-TONE' } },
        { id: 'ash', name: 'Ash', type: 'player', blueprint: { tone: 'ASH-TONE' } },
        { id: 'bea', name: 'Bea', blueprint: { tone: 'BEA-TONE' } },
        { id: 'pip', name: 'Pip', type: 'player', blueprint: { tone: 'PIP-TONE' } },
        { id: 'cal', name: 'Zora Cal', blueprint: { tone: 'CAL-TONE' } },
        { id: 'dan', name: 'Dan' },
      ],
      seats: [
        { id: 'one', characterId: 'ash', primary: true },
        { id: 'two', characterId: 'bea' },
      ],
    };
    await withHarness(world, 'en', async (h) => {
      const notes = notesOf((await h.turn('Hello')).request('narrator'))[0].content;
      expect([...notes.matchAll(/^## (.+)$/gm)].map((m) => m[1])).toEqual(['Zora Cal', 'Aaron Zed']);
      expect(notes).not.toMatch(/ASH-TONE|BEA-TONE|PIP-TONE|Dan/);
    });
  });

  const long = (word: string) => Array.from({ length: 30 }, (_, i) => `${word} ${i} `.repeat(40).trim());
  const cast = (blueprint: Record<string, unknown>): InlineWorld => ({
    name: 'Long Notes',
    characters: ['npc-a', 'npc-b', 'npc-c', 'npc-d'].map((id) => ({
      id,
      name: id.toUpperCase(),
      blueprint: { tone: `tone of ${id}`, manner: 'slow', ...blueprint },
    })),
  });

  it('long blueprints: the sample lines go first, the rules stay while they fit; tone stays', async () => {
    await withHarness(cast({ rules: ['keep calm'], sampleLines: long('line') }), 'en', async (h) => {
      const notes = notesOf((await h.turn('Hello')).request('narrator'))[0].content;
      expect(estimateTokens(notes)).toBeLessThanOrEqual(6000);
      expect(notes).not.toContain('Sample lines');
      expect(notes).toContain('Shortened to fit: left out for every character: sample lines.');
      for (const id of ['npc-a', 'npc-b', 'npc-c', 'npc-d'])
        expect(notes).toContain(`## ${id.toUpperCase()}\n- Tone: tone of ${id}\n- Manner: slow\n- Rules:\n  - keep calm`);
    });
  });

  it('longer blueprints: the sample lines, then the rules go; tone and manner stay', async () => {
    await withHarness(cast({ rules: long('rule'), sampleLines: long('line') }), 'en', async (h) => {
      const notes = notesOf((await h.turn('Hello')).request('narrator'))[0].content;
      expect(estimateTokens(notes)).toBeLessThanOrEqual(6000);
      expect(notes).not.toMatch(/Sample lines|Rules/);
      expect(notes).toContain('Shortened to fit: left out for every character: sample lines, rules.');
      for (const id of ['npc-a', 'npc-b', 'npc-c', 'npc-d']) expect(notes).toContain(`## ${id.toUpperCase()}\n- Tone: tone of ${id}\n- Manner: slow`);
    });
  });

  it('zh-Hans: the localized header and labels', async () => {
    await withHarness(EMBERBACK, 'zh-Hans', async (h) => {
      const request = (await h.turn('你好')).request('narrator');
      const notes = notesOf(request)[0].content;
      expect(notes).toContain('以下是故事中由你演绎的角色的扮演笔记');
      expect(notes).toContain('## Mira（又名the ferrywoman）\n- 语气：dry, unhurried, a little amused\n- 举止：');
      expect(notes).toContain('- 关系：\n  - Tomas Vell：owes him a favour she would rather forget');
      expect(notes).toContain('- 示例台词：');
      expect(request.section('runtime-body')).toMatch(/叙述者/);
    });
  });

  it.each([
    ['no world at all', undefined],
    ['characters without blueprints', { name: 'Plain', characters: [{ id: 'oda', name: 'Oda' }] }],
  ])('%s: no segment, and the turn runs', async (_label, world) => {
    const h = await createPluginHarness({ plugins: [PLUGIN, NARRATOR], ...(world ? { world } : {}), replies: { 'narrator/narrator': 'Fog.' } });
    try {
      const turn = await h.turn('I look around');
      expect(notesOf(turn.request('narrator'))).toEqual([]);
      expect(turn.story).toBe('Fog.');
    } finally {
      await h.close();
    }
  });
});
