import { selfDataRow } from '../../data-boundary';

/** Spec §4 "Data boundary" for io.selfData rows, on the row renderer the turn context uses. */
describe('selfData rows (spec §4 data boundary)', () => {
  it('a row is `- <key> | <JSON of the value>`', () => {
    expect(selfDataRow('hp', { now: 3, max: 5 })).toBe('- hp | {"now":3,"max":5}');
    expect(selfDataRow('mood', 'grim')).toBe('- mood | "grim"');
    expect(selfDataRow('状态 😀', ['鈴木', null, true])).toBe('- 状态 😀 | ["鈴木",null,true]');
  });

  it('UUIDs, ISO times, sessionId and updatedAt are removed at every depth; readable ids and story dates stay', () => {
    const value = {
      sessionId: 's-1',
      updatedAt: '2026-03-01T10:00:00.000Z',
      date: 'Year 3, spring',
      friends: [
        { id: 'npc-2', sessionId: 's-1', seen: '2026-03-01T10:00:00Z', ref: '0f8fad5b-d9cb-469f-a165-70867728950e', notes: { at: '2026-03-01 10:00' } },
        '0f8fad5b-d9cb-469f-a165-70867728950e',
        'Mira',
      ],
    };
    expect(selfDataRow('npc-1', value)).toBe('- npc-1 | {"date":"Year 3, spring","friends":[{"id":"npc-2","notes":{}},"Mira"]}');
  });

  it('an id equal to the key is not repeated; an id that differs, or one deeper in the value, stays', () => {
    expect(selfDataRow('npc-1', { id: 'npc-1', name: 'Mira' })).toBe('- npc-1 | {"name":"Mira"}');
    expect(selfDataRow('npc-1', { id: 'npc-9', name: 'Mira' })).toBe('- npc-1 | {"id":"npc-9","name":"Mira"}');
    expect(selfDataRow('npc-1', { ally: { id: 'npc-1' } })).toBe('- npc-1 | {"ally":{"id":"npc-1"}}');
  });
});
