import { TextMemo } from '..';

describe('TextMemo', () => {
  const counting = () => {
    const computed: string[] = [];
    return {
      computed,
      length: (text: string) => {
        computed.push(text);
        return text.length;
      },
    };
  };

  it('answers a long text again without computing it, found by its content (another string object)', () => {
    const { computed, length } = counting();
    const memo = new TextMemo<number>({ fromChars: 4, maxChars: 100 });
    const text = 'The ember glows. 门开了。';
    expect(memo.answer(text, length)).toBe(text.length);
    expect(memo.answer([...text].join(''), length)).toBe(text.length);
    expect(computed).toEqual([text]);
  });

  it('holds at most maxChars of kept texts, the oldest forgotten first; shorter texts than fromChars are never kept', () => {
    const { computed, length } = counting();
    const memo = new TextMemo<number>({ fromChars: 4, maxChars: 10 });
    const [a, b, c] = ['aaaa', 'bbbbbb', 'cccc'];
    for (const text of [a, b, a, 'xyz', 'xyz']) expect(memo.answer(text, length)).toBe(text.length);
    expect(computed).toEqual([a, b, 'xyz', 'xyz']);
    // 4 + 6 + 4 > 10: `a`, the oldest, goes; `b` and `c` stay
    expect(memo.answer(c, length)).toBe(4);
    expect(memo.answer(b, length)).toBe(6);
    expect(memo.answer(a, length)).toBe(4);
    expect(computed).toEqual([a, b, 'xyz', 'xyz', c, a]);
    expect(memo.size).toBe(2);
    // a text longer than maxChars is computed each time, never kept
    const huge = 'h'.repeat(11);
    expect([memo.answer(huge, length), memo.answer(huge, length)]).toEqual([11, 11]);
    expect(computed.filter((t) => t === huge)).toHaveLength(2);
  });

  it('keeps an answer that is undefined', () => {
    let calls = 0;
    const memo = new TextMemo<undefined>({ fromChars: 1, maxChars: 10 });
    const none = () => {
      calls++;
      return undefined;
    };
    memo.answer('abc', none);
    memo.answer('abc', none);
    expect(calls).toBe(1);
  });
});
