import { byCodeUnits, foldKey, rosterLines } from '..';

describe('rosterLines, foldKey, byCodeUnits (SDK helpers for bookkeeping plugins)', () => {
  const characters = [
    { id: 'tomas', name: 'Tomas Vell', type: 'npc', aliases: ['the captain'] },
    { id: 'ash', name: 'Ash', type: 'player' },
    { id: 'Zed', name: 'Zed <the> & co', type: 'npc' },
    { id: 'mira', name: 'Mira', type: 'npc', aliases: ['the ferrywoman', 'M'] },
    { id: 'kit', name: 'Kit', type: 'npc' },
  ];
  const seats = [{ id: 'second', characterId: 'kit' }];

  it('lists id | name (aka …) [player] by id in code-unit order, escaped; or leaves the player-controlled out', () => {
    expect(rosterLines(characters, { seats })).toEqual([
      '- Zed | Zed &lt;the&gt; &amp; co',
      '- ash | Ash [player]',
      '- kit | Kit [player]',
      '- mira | Mira (aka the ferrywoman, M)',
      '- tomas | Tomas Vell (aka the captain)',
    ]);
    expect(rosterLines(characters, { seats, players: 'omit' }).map((l) => l.split(' | ')[0])).toEqual(['- Zed', '- mira', '- tomas']);
    expect(rosterLines(characters.slice(0, 2).reverse())).toEqual(rosterLines(characters.slice(0, 2))); // order-independent
  });

  it('folds a term to a readable key, cut by code points', () => {
    expect(foldKey('  The  Ash\tRiver ')).toBe('the-ash-river');
    expect(foldKey('灰烬 河')).toBe('灰烬-河');
    expect(foldKey('Cafe\u0301')).toBe('café'); // NFC
    const dragons = foldKey('🐉'.repeat(70));
    expect(Array.from(dragons)).toHaveLength(64);
    expect(dragons).toBe('🐉'.repeat(64));
    expect(foldKey('abcdef', 3)).toBe('abc');
  });

  it('sorts by code units, whatever the locale', () => {
    expect(['b', 'B', 'a', 'ä'].sort(byCodeUnits)).toEqual(['B', 'a', 'b', 'ä']);
  });
});
