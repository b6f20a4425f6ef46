import { WorldCharacter, WorldContextResult, withPublishedCharacters } from '..';

const world = [
  WorldCharacter.parse({
    id: 'mira',
    name: 'Mira',
    aliases: ['the ferrywoman'],
    description: 'The ferrywoman.',
    fields: { trust: 2, status: 'mending a net' },
    blueprint: { tone: 'dry' },
  }),
  WorldCharacter.parse({ id: 'ash', name: 'Ash', type: 'player', fields: { warmth: 3 } }),
];

describe('withPublishedCharacters (session.world-context@1 `characters`)', () => {
  it('replaces what a published character gives of the world’s, in place; aliases and blueprint stay; fields are replaced, not merged', () => {
    const out = withPublishedCharacters(world, [{ id: 'mira', name: 'Mira', description: 'The ferrywoman.', fields: { trust: 3 } }]);
    expect(out.map((c) => c.id)).toEqual(['mira', 'ash']);
    expect(out[0]).toEqual({
      id: 'mira',
      name: 'Mira',
      aliases: ['the ferrywoman'],
      type: 'npc',
      description: 'The ferrywoman.',
      fields: { trust: 3 },
      blueprint: { tone: 'dry' },
    });
    expect(out[1]).toEqual(world[1]);
  });

  it('adds a new character after the world’s, in the published order, with the defaults of a world character', () => {
    const out = withPublishedCharacters(world, [
      { id: 'zed', name: 'Zed' },
      { id: 'bren', name: 'Old Bren', fields: { trust: 1 } },
    ]);
    expect(out.map((c) => c.id)).toEqual(['mira', 'ash', 'zed', 'bren']);
    expect(out[3]).toEqual({ id: 'bren', name: 'Old Bren', aliases: [], type: 'npc', description: '', fields: { trust: 1 } });
  });

  it('changes neither input', () => {
    const before = structuredClone(world);
    const published = [{ id: 'mira', name: 'Mira', fields: { trust: 5 } }];
    const out = withPublishedCharacters(world, published);
    (out[0].fields as Record<string, unknown>).trust = 9;
    expect(world).toEqual(before);
    expect(published[0].fields.trust).toBe(5);
  });

  it('a provider result naming a character twice, or a character without a name, or a blueprint, is refused', () => {
    expect(WorldContextResult.safeParse({ characters: [{ id: 'a', name: 'A' }] }).success).toBe(true);
    const twice = WorldContextResult.safeParse({
      characters: [
        { id: 'a', name: 'A' },
        { id: 'a', name: 'B' },
      ],
    });
    expect(twice.success).toBe(false);
    expect(twice.error?.issues[0]).toMatchObject({ path: ['characters', 1, 'id'], message: 'character "a" is published twice' });
    expect(WorldContextResult.safeParse({ characters: [{ id: 'a' }] }).success).toBe(false);
    expect(WorldContextResult.safeParse({ characters: [{ id: 'a', name: 'A', blueprint: { tone: 'x' } }] }).success).toBe(false);
  });

  it('a string holding U+0000 or a lone surrogate is refused at its path (a field key or nested value too); emoji, CJK and RTL pass as they are', () => {
    const text = '🧑🏽‍🚀 宇航员 رائد ‏עברית‎';
    const ok = WorldContextResult.parse({ characters: [{ id: 'a', name: text, aliases: [text], description: text, fields: { [text]: [text] } }] });
    expect(ok.characters?.[0]).toEqual({ id: 'a', name: text, aliases: [text], description: text, fields: { [text]: [text] } });
    const issues = (character: Record<string, unknown>) =>
      WorldContextResult.safeParse({ characters: [{ id: 'a', name: 'A', ...character }] }).error?.issues.map((i) => i.path);
    expect(issues({ name: 'A\u0000' })).toEqual([['characters', 0, 'name']]);
    expect(issues({ description: '\ud83e' })).toEqual([['characters', 0, 'description']]);
    expect(issues({ aliases: ['ok', 'x\udc00'] })).toEqual([['characters', 0, 'aliases', 1]]);
    expect(issues({ fields: { mood: { now: ['calm', 'a\u0000'] } } })).toEqual([['characters', 0, 'fields', 'mood', 'now', 1]]);
    expect(issues({ fields: { 'k\u0000': 1 } })).toEqual([['characters', 0, 'fields', 'k\u0000']]);
  });

  it('fields that refer to themselves or nest deeper than the call stack are walked without overflowing: the bad string is found at its path, each object walked once', () => {
    const cyclic: Record<string, unknown> = { mood: 'a\u0000' };
    cyclic.self = cyclic;
    const result = WorldContextResult.safeParse({ characters: [{ id: 'a', name: 'A', fields: cyclic }] });
    // (zod hands the refinement a copy of the record, whose `self` is the original: two objects, each walked once)
    expect(result.error?.issues.map((i) => i.path)).toEqual([
      ['characters', 0, 'fields', 'mood'],
      ['characters', 0, 'fields', 'self', 'mood'],
    ]);
    let deep: Record<string, unknown> = { leaf: 'a\u0000b' };
    for (let i = 0; i < 100_000; i++) deep = { deeper: deep };
    const paths = WorldContextResult.safeParse({ characters: [{ id: 'a', name: 'A', fields: deep }] }).error?.issues.map((i) => i.path);
    expect(paths).toHaveLength(1);
    expect(paths![0]).toHaveLength(3 + 100_000 + 1);
    expect(paths![0].slice(-2)).toEqual(['deeper', 'leaf']);
  });
});
