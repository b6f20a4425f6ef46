import stringWidth from 'string-width';
import wrapAnsi from 'wrap-ansi';

/** The widest line the player prints, however wide the terminal. */
export const MAX_WIDTH = 100;

/** The width to wrap at: the terminal's columns (80 when unknown), at most MAX_WIDTH, at least 20. */
export function readableWidth(columns: number | undefined): number {
  return Math.max(20, Math.min(columns && columns > 0 ? columns : 80, MAX_WIDTH));
}

/** Display columns of a line, as a terminal draws it (`string-width`: CJK and emoji 2, combining marks 0). */
export const displayWidth = (text: string): number => stringWidth(text);

const graphemes = new Intl.Segmenter();

/** The longest start of `text` that fits `width` columns, cut between grapheme clusters (never inside one). */
export function truncateToWidth(text: string, width: number): string {
  let out = '';
  let used = 0;
  for (const { segment } of graphemes.segment(text)) {
    const w = stringWidth(segment);
    if (used + w > width) break;
    out += segment;
    used += w;
  }
  return out;
}

// C0/C1 controls other than the newline: a model's text never moves the cursor or restyles the terminal
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** Text from the engine made safe to print: tabs are spaces, `\r` and other control characters go. */
export const printable = (text: string): string => text.replace(/\t/g, ' ').replace(CONTROLS, '');

/** One paragraph (no newline) wrapped by `wrap-ansi`: hard (a word longer than a line is cut between grapheme clusters), trimmed at breaks. */
const wrapParagraph = (text: string, width: number): string[] => wrapAnsi(text, width, { hard: true }).split('\n');

/**
 * Word-wraps text that arrives in pieces (streamed deltas) at `width` display columns, writing each
 * word as soon as the space after it shows where it ends (so it never has to move once written).
 * The layout is `wrap-ansi`'s (widths by `string-width`): each complete word is placed by wrapping
 * the current screen row plus the new words, which gives the rows wrapping the whole text would.
 */
export class StreamWrapper {
  /** The current screen row as written so far (a row `wrap-ansi` made: never wider than `width`). */
  private row = '';
  /** Received but not placed: the last (maybe unfinished) word, with the spaces before it. */
  private pending = '';

  constructor(
    private readonly width: number,
    private readonly write: (text: string) => void,
  ) {}

  push(text: string): void {
    this.pending += printable(text);
    let newline: number;
    while ((newline = this.pending.indexOf('\n')) >= 0) {
      this.place(this.pending.slice(0, newline));
      this.pending = this.pending.slice(newline + 1);
      this.write('\n');
      this.row = '';
    }
    // the words before the last run of spaces are complete; the spaces stay with the word after them
    let cut = this.pending.lastIndexOf(' ');
    while (cut > 0 && this.pending[cut - 1] === ' ') cut--;
    if (cut > 0) {
      this.place(this.pending.slice(0, cut));
      this.pending = this.pending.slice(cut);
    }
    this.placeFullRowsOfRun();
  }

  /**
   * A run with no space that starts a row (Chinese or Japanese text, a long word) would otherwise wait
   * for the next space or newline. Hard-wrapped from the start of a row, its rows are cut between
   * grapheme clusters in order and do not change as it grows, so each full row is written as it fills.
   */
  private placeFullRowsOfRun(): void {
    if (this.row !== '' || this.pending === '' || this.pending.includes(' ')) return;
    const rows = wrapParagraph(this.pending, this.width);
    if (rows.length < 2) return;
    this.write(`${rows.slice(0, -1).join('\n')}\n`);
    this.pending = rows.at(-1)!;
  }

  /** Ends the text: writes the last word and a newline if the line has anything. */
  end(): void {
    this.place(this.pending);
    this.pending = '';
    if (this.row !== '') this.write('\n');
    this.row = '';
  }

  private place(words: string): void {
    if (words.trim() === '') return;
    const rows = wrapParagraph(this.row + words, this.width);
    // the rows already on the screen come back as they are (greedy wrapping); only what follows is written
    const first = rows[0].startsWith(this.row) ? rows[0].slice(this.row.length) : `\n${rows[0]}`;
    this.write([first, ...rows.slice(1)].join('\n'));
    this.row = rows.at(-1)!;
  }
}

/** Wraps a whole text at once (the same rows as streaming it). */
export function wrapText(text: string, width: number): string {
  let out = '';
  const wrapper = new StreamWrapper(width, (t) => (out += t));
  wrapper.push(text);
  wrapper.end();
  return out;
}

/**
 * `text` wrapped as a hanging list item: the first line starts with `first` (e.g. `  · `), the
 * others with as many spaces, all within `width` display columns.
 */
export function hangingLines(text: string, width: number, first: string): string {
  const indent = stringWidth(first);
  const lines = wrapText(text, Math.max(20, width - indent))
    .replace(/\n$/, '')
    .split('\n');
  return lines.map((line, i) => `${i === 0 ? first : ' '.repeat(indent)}${line}\n`).join('');
}
