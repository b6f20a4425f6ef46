/** The widest line the player prints, however wide the terminal. */
export const MAX_WIDTH = 100;

/** The width to wrap at: the terminal's columns (80 when unknown), at most MAX_WIDTH, at least 20. */
export function readableWidth(columns: number | undefined): number {
  return Math.max(20, Math.min(columns && columns > 0 ? columns : 80, MAX_WIDTH));
}

/**
 * Word-wraps text that arrives in pieces (streamed deltas) at `width` columns, writing each word as
 * soon as the character after it shows where it ends (so it never has to move once written). Widths are counted in
 * code points (never UTF-16 units); a word longer than a line is cut at the width.
 */
export class StreamWrapper {
  private column = 0;
  private word = '';
  private pendingSpace = false;

  constructor(
    private readonly width: number,
    private readonly write: (text: string) => void,
  ) {}

  push(text: string): void {
    for (const char of text) {
      if (char === '\n') {
        this.flushWord();
        this.write('\n');
        this.column = 0;
        this.pendingSpace = false;
      } else if (char === ' ' || char === '\t' || char === '\r') {
        this.flushWord();
        if (this.column > 0) this.pendingSpace = true;
      } else {
        this.word += char;
      }
    }
  }

  /** Ends the text: writes the last word and a newline if the line has anything. */
  end(): void {
    this.flushWord();
    if (this.column > 0) this.write('\n');
    this.column = 0;
    this.pendingSpace = false;
  }

  private flushWord(): void {
    let chars = Array.from(this.word);
    this.word = '';
    if (chars.length === 0) return;
    const space = this.pendingSpace ? 1 : 0;
    if (this.column > 0 && this.column + space + chars.length > this.width) {
      this.write('\n');
      this.column = 0;
    } else if (space) {
      this.write(' ');
      this.column += 1;
    }
    this.pendingSpace = false;
    while (chars.length > this.width - this.column) {
      const room = this.width - this.column;
      this.write(chars.slice(0, room).join('') + '\n');
      chars = chars.slice(room);
      this.column = 0;
    }
    this.write(chars.join(''));
    this.column += chars.length;
  }
}

/** Wraps a whole text at once. */
export function wrapText(text: string, width: number): string {
  let out = '';
  const wrapper = new StreamWrapper(width, (t) => (out += t));
  wrapper.push(text);
  wrapper.end();
  return out;
}

/**
 * `text` wrapped as a hanging list item: the first line starts with `first` (e.g. `  · `), the
 * others with as many spaces, all within `width` (code points).
 */
export function hangingLines(text: string, width: number, first: string): string {
  const indent = Array.from(first).length;
  const lines = wrapText(text, Math.max(20, width - indent))
    .replace(/\n$/, '')
    .split('\n');
  return lines.map((line, i) => `${i === 0 ? first : ' '.repeat(indent)}${line}\n`).join('');
}
