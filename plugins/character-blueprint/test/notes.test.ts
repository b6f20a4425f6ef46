import { join } from 'node:path';
import { loadPluginEntries, pluginSdk } from '../../../libs/engine';
import { estimateTokens, loadPlugin, type Locale, WorldCharacter, type WorldSeat } from '../../../libs/plugins-sdk';
import { characterNotes, NOTES_BUDGET_TOKENS, notedCharacters } from '../server/notes';

const ROOT = join(__dirname, '..');
const character = (input: Record<string, unknown>) => WorldCharacter.parse(input);
const options = (locale: Locale = 'en', seats: WorldSeat[] = [], budget?: number) => ({
  locale,
  seats,
  budget,
  project: pluginSdk.modelFacingJson,
  escape: pluginSdk.escapeXml,
});

describe('character-blueprint: the notes', () => {
  it('declares one prompt.segment@1 provider, off by default, and registers it', async () => {
    const plugin = loadPlugin(ROOT);
    expect(plugin.manifest).toMatchObject({ id: 'character-blueprint', enabledByDefault: false });
    expect(plugin.runtimes).toEqual([]);
    expect(plugin.manifest.contributes.extensions).toEqual([{ point: 'prompt.segment@1', id: 'character-notes' }]);
    const registry = await loadPluginEntries([plugin], pluginSdk);
    expect(registry.providers('prompt.segment@1').map((p) => [p.pluginId, p.id])).toEqual([['character-blueprint', 'character-notes']]);
  });

  it('writes every field in the schema order, lists as sub-items, relationships by the other character’s name', () => {
    const notes = characterNotes(
      [
        character({
          id: 'mira',
          name: 'Mira',
          aliases: ['the ferrywoman'],
          blueprint: {
            sampleLines: ['Sit.'],
            rules: ['never lies'],
            relationships: { tomas: 'owes him', nobody: 'a stranger' },
            secrets: ['saw the eye'],
            fears: ['waking'],
            goals: ['ferry'],
            personality: 'patient',
            manner: 'asks back',
            tone: 'dry',
          },
        }),
        character({ id: 'tomas', name: 'Tomas Vell' }),
      ],
      options(),
    );
    expect(notes).toBe(
      [
        '<character-notes>',
        "Roleplay notes for the characters the story voices (never the player's own character). Voice each character by its notes. The player has not read them: let secrets come out only through the story.",
        '',
        '## Mira (aka the ferrywoman)',
        '- Tone: dry',
        '- Manner: asks back',
        '- Personality: patient',
        '- Goals:',
        '  - ferry',
        '- Fears:',
        '  - waking',
        '- Secrets:',
        '  - saw the eye',
        '- Relationships:',
        '  - Tomas Vell: owes him',
        '  - nobody: a stranger',
        '- Rules:',
        '  - never lies',
        '- Sample lines:',
        '  - Sit.',
        '</character-notes>',
      ].join('\n'),
    );
  });

  it('leaves out every character a player controls (type player, or seated), and those without notes; sorts by id', () => {
    const characters = [
      character({ id: 'zed', name: 'Aaron Zed', blueprint: { tone: 'ZED' } }),
      character({ id: 'ash', name: 'Ash', type: 'player', blueprint: { tone: 'ASH' } }),
      character({ id: 'bea', name: 'Bea', blueprint: { tone: 'BEA' } }),
      character({ id: 'cal', name: 'Zora Cal', blueprint: { tone: 'CAL' } }),
      character({ id: 'dan', name: 'Dan' }),
    ];
    const seats = [{ id: 'two', characterId: 'bea', primary: false }];
    expect(notedCharacters(characters, options('en', seats)).map((c) => c.id)).toEqual(['cal', 'zed']);
    const notes = characterNotes(characters, options('en', seats))!;
    expect(notes.indexOf('## Zora Cal')).toBeLessThan(notes.indexOf('## Aaron Zed'));
    expect(notes).not.toMatch(/ASH|BEA|Dan/);
    // the same input, the same bytes, whatever order the world lists them in
    expect(characterNotes([...characters].reverse(), options('en', seats))).toBe(notes);
  });

  it('no character with notes: no segment', () => {
    expect(characterNotes([], options())).toBeNull();
    expect(characterNotes([character({ id: 'a', name: 'A', blueprint: {} })], options())).toBeNull();
  });

  it('is data: escaped, one line per value, through the data boundary', () => {
    const notes = characterNotes(
      [
        character({
          id: 'x',
          name: 'X',
          blueprint: {
            tone: 'sly </character-notes> & <b>',
            goals: ['one\ntwo', '2026-01-02T03:04:05Z'],
            relationships: { '3f1c2b9e-1d2c-4a5b-9c8d-7e6f5a4b3c2d': 'uuid key' },
          },
        }),
      ],
      options(),
    )!;
    expect(notes).toContain('- Tone: sly &lt;/character-notes&gt; &amp; &lt;b&gt;');
    expect(notes).toContain('- Goals:\n  - one two\n</character-notes>');
    expect(notes).not.toContain('uuid key');
    expect(notes.match(/<\/character-notes>/g)).toHaveLength(1);
  });

  const long = (word: string, n: number) => Array.from({ length: n }, (_, i) => `${word} ${i} `.repeat(40).trim());
  const cast = (blueprint: (i: number) => Record<string, unknown>, n = 4) =>
    Array.from({ length: n }, (_, i) => character({ id: `npc-${i}`, name: `Npc ${i}`, blueprint: { tone: `tone of ${i}`, ...blueprint(i) } }));

  it('trims level by level within the budget: sample lines first (for every character), then rules; tone never', () => {
    const fits = characterNotes(
      cast(() => ({ rules: ['r'], sampleLines: ['s'] })),
      options(),
    )!;
    expect(fits).toContain('- Sample lines:');
    expect(fits).not.toContain('Shortened');

    const lines = characterNotes(
      cast(() => ({ manner: 'm', rules: ['keep calm'], sampleLines: long('line', 30) })),
      options(),
    )!;
    expect(estimateTokens(lines)).toBeLessThanOrEqual(NOTES_BUDGET_TOKENS);
    expect(lines).not.toContain('Sample lines');
    expect(lines).toContain('- Rules:\n  - keep calm');
    expect(lines).toContain('Shortened to fit: left out for every character: sample lines.');

    const rules = characterNotes(
      cast(() => ({ manner: 'm', rules: long('rule', 30), sampleLines: long('line', 30) })),
      options(),
    )!;
    expect(estimateTokens(rules)).toBeLessThanOrEqual(NOTES_BUDGET_TOKENS);
    expect(rules).not.toMatch(/Sample lines|Rules/);
    expect(rules).toContain('Shortened to fit: left out for every character: sample lines, rules.');
    for (let i = 0; i < 4; i++) expect(rules).toContain(`## Npc ${i}\n- Tone: tone of ${i}\n- Manner: m`);
  });

  it('when tone alone does not fit, whole characters go from the end and are named; a tone is never cut', () => {
    const characters = cast((i) => ({ tone: `${'very long tone '.repeat(300)}${i}`, sampleLines: ['x'] }), 8);
    const notes = characterNotes(characters, options('en', [], 4000))!;
    expect(estimateTokens(notes)).toBeLessThanOrEqual(4000);
    const kept = [...notes.matchAll(/^## (Npc \d)$/gm)].map((m) => m[1]);
    expect(kept).toEqual(['Npc 0', 'Npc 1', 'Npc 2']);
    for (const name of kept) expect(notes).toContain(`- Tone: ${'very long tone '.repeat(300)}${name.slice(-1)}`);
    expect(notes).toContain('Notes not listed, to fit: Npc 3, Npc 4, Npc 5, Npc 6, Npc 7.');
  });

  it('zh-Hans: localized headers and labels; CJK counts one token a character', () => {
    const notes = characterNotes(
      [
        character({
          id: 'mira',
          name: '米拉',
          aliases: ['摆渡人'],
          blueprint: { tone: '冷淡', goals: ['渡河'], relationships: { tomas: '欠他人情' }, sampleLines: ['坐。'] },
        }),
        character({ id: 'tomas', name: '托马斯' }),
      ],
      options('zh-Hans'),
    )!;
    expect(notes).toContain('以下是故事中由你演绎的角色的扮演笔记');
    expect(notes).toContain('## 米拉（又名摆渡人）\n- 语气：冷淡\n- 目标：\n  - 渡河\n- 关系：\n  - 托马斯：欠他人情\n- 示例台词：\n  - 坐。');
    const trimmed = characterNotes(
      cast(() => ({ sampleLines: ['长'.repeat(2000)] })),
      options('zh-Hans'),
    )!;
    expect(trimmed).toContain('为控制篇幅，所有角色都省略了：示例台词。');
    expect(trimmed).not.toContain('示例台词：');
  });
});
