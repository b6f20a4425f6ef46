import {
  characterProfileLines,
  characterSheetSegments,
  currentCharacterOf,
  cutText,
  modelFacingJson,
  primarySeat,
  profileLine,
  worldCharacterSheets,
} from '../../plugins-sdk';
import { modelFacingJson as kernelModelFacingJson } from '../../context';

const UUID = '8a1c2f3e-1111-4222-8333-944445555666';
const schema = { properties: { might: { minimum: 0, maximum: 5 }, wits: { maximum: 10 }, luck: { minimum: 1, maximum: 3 } } };
const characters = [
  { id: 'ash', name: 'Ash', type: 'player', description: 'A courier.', fields: { might: 2, wits: 4, luck: 'high', token: UUID, seen: '2026-01-02T03:04:05Z' } },
  { id: 'mira', name: 'Mira', aliases: ['the Ferrywoman'], description: 'Hears </character-profiles> everything.', fields: { might: 1 } },
  { id: 'bo', name: 'Bo', type: 'player', description: 'Another player.' },
];

describe('seats', () => {
  const seats = [{ id: 's1', characterId: 'mira' }, { id: 's2', characterId: 'ash', primary: true }, { id: 's3' }];

  it('primarySeat: the seat marked primary, else the first, else undefined', () => {
    expect(primarySeat(seats)?.id).toBe('s2');
    expect(primarySeat(seats.map((s) => ({ ...s, primary: false })))?.id).toBe('s1');
    expect(primarySeat([])).toBeUndefined();
    expect(primarySeat(undefined)).toBeUndefined();
  });

  it('currentCharacterOf: the character seated there now (a seat or its id, looked up in seats)', () => {
    expect(currentCharacterOf(primarySeat(seats), characters, seats)?.id).toBe('ash');
    expect(currentCharacterOf('s1', characters, seats)?.id).toBe('mira');
    expect(currentCharacterOf({ id: 's1', characterId: 'bo' }, characters, seats)?.id).toBe('mira'); // the current assignment wins
    expect(currentCharacterOf('s3', characters, seats)).toBeUndefined();
    expect(currentCharacterOf('nope', characters, seats)).toBeUndefined();
    expect(currentCharacterOf(undefined, characters, seats)).toBeUndefined();
    expect(currentCharacterOf('s1', [], seats)).toBeUndefined();
  });
});

describe('characterSheetSegments (spec §4)', () => {
  it('<player-character>: the current sheet through modelFacingJson, ranges as "2/5"; only with currentCharacterId', () => {
    const [sheet, ...rest] = characterSheetSegments(characters, { currentCharacterId: 'ash', locale: 'en', schema });
    expect(rest).toEqual([]);
    expect(sheet).toEqual({
      id: 'player-character',
      content:
        '<player-character>\n{"id":"ash","name":"Ash","type":"player","description":"A courier.","fields":{"might":"2/5","wits":4,"luck":"high"}}\n</player-character>',
      position: 'system',
      volatility: 'turn',
    });
    expect(characterSheetSegments(characters, { locale: 'en', schema })).toEqual([]);
    expect(characterSheetSegments(characters, { currentCharacterId: 'ghost', locale: 'en' })).toEqual([]);
  });

  it('without a schema a number stays bare', () => {
    const [sheet] = characterSheetSegments(characters, { currentCharacterId: 'mira', locale: 'en' });
    expect(sheet.content).toContain('"fields":{"might":1}');
  });

  it('<character-profiles> with profiles: true: the npcs line format without the current character, escaped, audience passed', () => {
    const segments = characterSheetSegments(characters, { currentCharacterId: 'ash', profiles: true, locale: 'en', schema, audience: 'story' });
    expect(segments.map((s) => s.id)).toEqual(['player-character', 'character-profiles']);
    expect(segments[1]).toEqual({
      id: 'character-profiles',
      content:
        '<character-profiles>\nMira (aka the Ferrywoman) [npc] | Hears &lt;/character-profiles&gt; everything. | {"might":"1/5"}\nBo [player] | Another player.\n</character-profiles>',
      position: 'system',
      volatility: 'turn',
      audience: 'story',
    });
    expect(segments[1].content).toBe(
      `<character-profiles>\n${characterProfileLines(characters, { locale: 'en', excludeId: 'ash', schema }).replace('</', '&lt;/').replace('> every', '&gt; every')}\n</character-profiles>`,
    );
  });

  it('profiles without a current character list everyone; seated characters carry [player]', () => {
    const [profiles] = characterSheetSegments(characters.slice(1), { profiles: true, locale: 'en', seats: [{ id: 's', characterId: 'mira' }] });
    expect(profiles.content.split('\n')[1]).toBe('Mira (aka the Ferrywoman) [npc] [player] | Hears &lt;/character-profiles&gt; everything. | {"might":1}');
  });

  it('the "profiles not listed" line follows the locale', () => {
    const many = Array.from({ length: 5 }, (_, i) => ({ id: `c${i}`, name: `角色${i}`, description: '长'.repeat(400) }));
    const [en] = characterSheetSegments(many, { profiles: true, locale: 'en' });
    const [zh] = characterSheetSegments(many, { profiles: true, locale: 'zh-Hans' });
    expect(characterProfileLines(many, { locale: 'en', budget: 900 }).split('\n')).toHaveLength(3);
    expect(characterProfileLines(many, { locale: 'zh-Hans', budget: 900 }).split('\n')[2]).toBe(
      '未列出档案的角色（用 get-character 按名字或别名查询）：角色2、角色3、角色4',
    );
    expect(characterProfileLines(many, { locale: 'en', budget: 900 }).split('\n')[2]).toBe(
      'Profiles not listed (look them up by name or alias with get-character): 角色2, 角色3, 角色4',
    );
    expect(en.content).not.toContain('Profiles not listed'); // 5 × ~410 fits 8,000
    expect(zh.content).not.toContain('未列出');
  });

  it('one line format for both: profileLine is what characters.npcs and <character-profiles> print', () => {
    expect(profileLine(characters[1], { schema })).toBe('Mira (aka the Ferrywoman) [npc] | Hears </character-profiles> everything. | {"might":"1/5"}');
    expect(profileLine({ id: UUID, name: 'X', fields: { ref: UUID } })).toBe('X [npc]');
  });

  it('cutText: at most n code points, on a grapheme boundary, … marks a cut', () => {
    expect(cutText('abc', 3)).toBe('abc');
    expect(cutText('abcd', 3)).toBe('ab…');
    expect(cutText('👩‍👩‍👧‍👦👩‍👩‍👧‍👦', 10)).toBe('👩‍👩‍👧‍👦…'); // a family is 7 code points
    expect(cutText('👩‍👩‍👧‍👦👩‍👩‍👧‍👦', 7)).toBe('…'); // never half a ZWJ sequence
    expect(cutText('😀😀😀😀', 3)).toBe('😀😀…');
  });

  it('the SDK modelFacingJson is the kernel’s', () => {
    expect(modelFacingJson).toBe(kernelModelFacingJson);
  });
});

describe('worldCharacterSheets (ctx.sdk: a story runtime’s sheets from the world)', () => {
  const seats = [{ id: 's1', characterId: 'ash', primary: true }];

  it('gives characterSheetSegments for the primary seat’s character with every other profile; none without a world', () => {
    const world = { characters, seats, characterSchema: schema };
    expect(worldCharacterSheets(world, { locale: 'zh-Hans', audience: 'self' })).toEqual(
      characterSheetSegments(characters, { currentCharacterId: 'ash', profiles: true, locale: 'zh-Hans', schema, seats, audience: 'self' }),
    );
    expect(worldCharacterSheets(world, { locale: 'en' }).every((s) => !('audience' in s))).toBe(true);
    expect(worldCharacterSheets(null, { locale: 'en' })).toEqual([]);
  });
});
