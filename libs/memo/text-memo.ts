export interface TextMemoOptions {
  /** Texts at least this long (UTF-16 units) are kept; shorter ones are computed again each time (cheaper than keeping them). */
  fromChars: number;
  /** The kept texts' lengths summed, at most: keeping one more forgets the oldest kept first; a longer text is never kept. */
  maxChars: number;
}

/**
 * A process's memory of a pure function's answers for long texts (a token estimate, a tally), found
 * by the text's content: a kept answer costs a hash of the text, not another scan of it. The
 * requests of a turn repeat the same system prompts and history messages, tens of thousands of
 * characters each (issue 33). Bounded by the characters it holds, the oldest kept forgotten first.
 * Only ever a shortcut: `compute` must be a pure function of the text.
 */
export class TextMemo<V> {
  private readonly kept = new Map<string, V>();
  private chars = 0;

  constructor(private readonly options: TextMemoOptions) {}

  /** `compute(text)`, answered again from memory for a long text computed before. */
  answer(text: string, compute: (text: string) => V): V {
    if (text.length < this.options.fromChars) return compute(text);
    const kept = this.kept.get(text);
    if (kept !== undefined || this.kept.has(text)) return kept as V;
    const value = compute(text);
    if (text.length <= this.options.maxChars) {
      for (const old of this.kept.keys()) {
        if (this.chars + text.length <= this.options.maxChars) break;
        this.kept.delete(old);
        this.chars -= old.length;
      }
      this.kept.set(text, value);
      this.chars += text.length;
    }
    return value;
  }

  /** Texts held. */
  get size(): number {
    return this.kept.size;
  }
}
