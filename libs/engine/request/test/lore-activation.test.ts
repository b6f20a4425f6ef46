import { activateLorebook, type LorebookEntryInput } from '../../../context';
import { activeLore } from '../lore-activation';

const entries: readonly LorebookEntryInput[] = [
  { id: 'lore', keys: [], constant: true, content: '<world-lore>x</world-lore>', position: 'before-plugin', order: -2, scanDepth: 0 },
  { id: 'ferry', keys: ['ferry'], constant: false, content: 'The ferry runs at dusk.', position: 'after-plugin', order: 1, scanDepth: 2 },
  { id: 'vents', keys: ['vents', '火口'], constant: false, content: 'The vents breathe.', position: 'before-plugin', order: 2, scanDepth: 1 },
];

describe('activeLore: one scan per lorebook, tail and player text', () => {
  it('answers as activateLorebook does, the same frozen answer for the same entries, tail object and text', () => {
    const tail = [{ text: 'They talked about the ferry.' }, { text: 'Nothing else.' }];
    const first = activeLore(entries, { playerInput: 'Watch the 火口', committedTail: tail });
    expect(first).toEqual(activateLorebook(entries, { playerInput: 'Watch the 火口', committedTail: tail }));
    expect(first.map((e) => e.id)).toEqual(['lore', 'ferry', 'vents']);
    expect(activeLore(entries, { playerInput: 'Watch the 火口', committedTail: tail })).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first[1].reason)).toBe(true);
  });

  it('another player text, another tail or other entries are scanned anew (nothing answered from a scan of other data)', () => {
    const tail = [{ text: 'They talked about the ferry.' }, { text: 'Nothing else.' }];
    const withVents = activeLore(entries, { playerInput: 'Watch the vents', committedTail: tail });
    const without = activeLore(entries, { playerInput: 'Sleep', committedTail: tail });
    expect(withVents.map((e) => e.id)).toEqual(['lore', 'ferry', 'vents']);
    expect(without.map((e) => e.id)).toEqual(['lore', 'ferry']);
    // a later history view is another tail object: the ferry is out of its scan depth now
    const later = [...tail, { text: 'A.' }, { text: 'B.' }];
    expect(activeLore(entries, { playerInput: 'Sleep', committedTail: later }).map((e) => e.id)).toEqual(['lore']);
    const others = entries.slice(0, 1);
    expect(activeLore(others, { playerInput: 'Watch the vents', committedTail: tail }).map((e) => e.id)).toEqual(['lore']);
  });
});
