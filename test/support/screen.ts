// eslint-disable-next-line no-control-regex
const SEQUENCE = /\u001b\[([0-9;?]*)([A-Za-z])|\u001b[()][A-Z0-9]|\u001b[=>]|\r|\n|\u0007/g;

/**
 * What a terminal shows after `raw` (a pseudo-terminal's output), as lines of text: enough of a VT100
 * for the play client and readline — carriage return, newline, erase line (`ESC[K`, `ESC[2K`),
 * erase below, cursor to column (`ESC[nG`), cursor forward/back/up/down; colours and other sequences
 * are dropped. Columns are counted in code points (the tests' text is what they look for, not its width).
 */
export function renderScreen(raw: string): string {
  const lines: string[][] = [[]];
  let row = 0;
  let col = 0;
  const put = (text: string) => {
    for (const ch of text) {
      const line = lines[row];
      while (line.length < col) line.push(' ');
      line[col] = ch;
      col++;
    }
  };
  let last = 0;
  for (const match of raw.matchAll(SEQUENCE)) {
    put(raw.slice(last, match.index));
    last = match.index + match[0].length;
    const [token, params = '', command] = match;
    const n = Number(params.split(';')[0]) || 0;
    if (token === '\r') col = 0;
    else if (token === '\n') {
      row++;
      col = 0;
      if (!lines[row]) lines[row] = [];
    } else if (command === 'K') {
      if (n === 2) lines[row] = [];
      else if (n === 1) lines[row] = lines[row].map((ch, i) => (i <= col ? ' ' : ch));
      else lines[row] = lines[row].slice(0, col);
    } else if (command === 'J' && n === 0) {
      lines[row] = lines[row].slice(0, col);
      lines.length = row + 1;
    } else if (command === 'G') col = Math.max(0, (n || 1) - 1);
    else if (command === 'C') col += n || 1;
    else if (command === 'D') col = Math.max(0, col - (n || 1));
    else if (command === 'A') row = Math.max(0, row - (n || 1));
    else if (command === 'B') {
      row += n || 1;
      while (lines.length <= row) lines.push([]);
    }
  }
  put(raw.slice(last));
  return lines.map((line) => line.join('')).join('\n');
}
