import { isWellFormedText } from '../../../text';
import { partialText } from '../kept-turn';

const delta = (seq: number, text: string) => ({ sessionId: 's', callId: 'c', seq, text });

describe('partialText: the story text a stop keeps', () => {
  it('joins the deltas in order from the first, each once, and stops at a gap (a delta the bus lost)', () => {
    expect(partialText([delta(2, 'dragon '), delta(1, 'The '), delta(2, 'dragon '), delta(3, 'wakes ')])).toBe('The dragon wakes');
    expect(partialText([delta(1, 'The '), delta(3, 'wakes')])).toBe('The');
    expect(partialText([delta(2, 'dragon')])).toBe('');
    expect(partialText([])).toBe('');
  });

  it('never ends inside a code point: a surrogate without its pair is dropped; emoji and CJK stay whole', () => {
    const dragon = '🐉';
    const cut = partialText([delta(1, '龍の息 '), delta(2, `fire${dragon[0]}`)]);
    expect(cut).toBe('龍の息 fire');
    expect(isWellFormedText(cut)).toBe(true);
    // a pair split across two deltas is whole again once both are there
    expect(partialText([delta(1, `灰${dragon[0]}`), delta(2, `${dragon[1]} 👩‍👩‍👧 🇯🇵`)])).toBe('灰🐉 👩‍👩‍👧 🇯🇵');
  });
});
