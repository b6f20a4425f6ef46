import { applyPreferencesPatch, NO_PREFERENCES, normalizePreferences, playerOverrides, samePreferences, unknownSlotIssues } from '..';

describe("the player's preferences per slot (PATCH /v1/sessions/:id/preferences)", () => {
  const current = {
    slots: { story: { reasoning: { enabled: true as const, effort: 'high' as const }, toolChoice: 'auto' as const }, fast: { toolChoice: 'none' as const } },
  };

  it('a value sets a field, null clears it, an absent field stays; a null slot clears the slot', () => {
    expect(applyPreferencesPatch(current, { slots: { story: { toolChoice: null }, fast: null, extra: { toolChoice: 'required' } } })).toEqual({
      slots: { extra: { toolChoice: 'required' }, story: { reasoning: { enabled: true, effort: 'high' } } },
    });
    expect(applyPreferencesPatch(current, { slots: { story: { reasoning: { enabled: false } } } }).slots.story).toEqual({
      reasoning: { enabled: false },
      toolChoice: 'auto',
    });
  });

  it('a slot left with nothing is no entry; slots in name order, so equal preferences are equal JSON', () => {
    const cleared = applyPreferencesPatch(current, { slots: { story: { reasoning: null, toolChoice: null } } });
    expect(cleared).toEqual({ slots: { fast: { toolChoice: 'none' } } });
    expect(Object.keys(normalizePreferences({ slots: { b: { toolChoice: 'auto' }, a: { toolChoice: 'none' }, c: {} } }).slots)).toEqual(['a', 'b']);
    expect(
      samePreferences(current, { slots: { fast: { toolChoice: 'none' }, story: { toolChoice: 'auto', reasoning: { effort: 'high', enabled: true } } } }),
    ).toBe(true);
    expect(samePreferences(current, NO_PREFERENCES)).toBe(false);
    expect(applyPreferencesPatch(NO_PREFERENCES, { slots: {} })).toEqual({ slots: {} });
  });

  it('a slot named like an Object.prototype member is a plain key', () => {
    const odd = applyPreferencesPatch(NO_PREFERENCES, { slots: JSON.parse('{"__proto__": {"toolChoice": "none"}, "constructor": {"toolChoice": "auto"}}') });
    expect(Object.getPrototypeOf(odd.slots)).toBe(Object.prototype);
    expect(Object.keys(odd.slots)).toEqual(['__proto__', 'constructor']);
    expect(playerOverrides(odd, '__proto__')).toEqual({ toolChoice: 'none' });
    expect(playerOverrides(NO_PREFERENCES, 'constructor')).toBeUndefined();
    expect(playerOverrides(NO_PREFERENCES, 'toString')).toBeUndefined();
  });

  it('names the slots llm.toml does not have', () => {
    expect(unknownSlotIssues(['story', 'fast'], { story: {}, nope: {} }, 'slots')).toEqual([
      { path: 'slots.nope', message: 'unknown model slot; the slots are "story", "fast"' },
    ]);
    expect(unknownSlotIssues(['story'], {}, 'slots')).toEqual([]);
  });
});
