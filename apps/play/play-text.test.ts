import { HELP_TEXT, parseLine } from './commands';
import { colorWanted, painter } from './style';
import { importContentType, importPath } from './world-file';
import { worldLine } from './world-lines';
import { displayWidth, hangingLines, readableWidth, StreamWrapper, wrapText } from './wrap';

describe('play client lines', () => {
  it('a line starting with / is a command, never story input; an unknown one is named', () => {
    expect(parseLine('  Look around ')).toEqual({ kind: 'input', text: 'Look around' });
    expect(parseLine('/help')).toEqual({ kind: 'command', name: 'help', arg: '' });
    expect(parseLine('/SESSION 1234 ')).toEqual({ kind: 'command', name: 'session', arg: '1234' });
    expect(parseLine('/retry')).toEqual({ kind: 'command', name: 'retry', arg: '' });
    expect(parseLine('/dance wildly')).toEqual({ kind: 'unknown', name: '/dance' });
    expect(parseLine('/')).toEqual({ kind: 'unknown', name: '/' });
    expect(parseLine('   ')).toEqual({ kind: 'empty' });
    expect(HELP_TEXT).toContain('/retry');
    expect(parseLine('/locale zh-CN')).toEqual({ kind: 'command', name: 'locale', arg: 'zh-CN' });
    expect(HELP_TEXT).toContain('/locale <tag>');
  });

  it("a command's argument is the rest of the line as typed: a file name keeps its spaces", () => {
    expect(parseLine('/import  my  card 灯塔 🌊.png ')).toEqual({ kind: 'command', name: 'import', arg: 'my  card 灯塔 🌊.png' });
    expect(parseLine('/WORLDS next')).toEqual({ kind: 'command', name: 'worlds', arg: 'next' });
    expect(parseLine('/world\tEmberback')).toEqual({ kind: 'command', name: 'world', arg: 'Emberback' });
    for (const line of ['/worlds', '/world <id>', '/import <file>']) expect(HELP_TEXT).toContain(line);
  });
});

describe('/import and /worlds', () => {
  it('reads a file name as a terminal pastes it: quoted, backslash-escaped, ~ for the home folder', () => {
    expect(importPath('"/cards/my card ورن.png"', { home: '/home/me', cwd: '/work' })).toBe('/cards/my card ورن.png');
    expect(importPath("'/cards/it''s.json'", { home: '/home/me', cwd: '/work' })).toBe("/cards/it''s.json");
    expect(importPath('/cards/my\\ card\\ 🌊.json', { home: '/home/me', cwd: '/work' })).toBe('/cards/my card 🌊.json');
    expect(importPath('~/cards/a.zip', { home: '/home/me', cwd: '/work' })).toBe('/home/me/cards/a.zip');
    expect(importPath('/cards/~x.png', { home: '/home/me', cwd: '/work' })).toBe('/cards/~x.png');
    expect(importPath('cards/a b.png', { home: '/home/me', cwd: '/work' })).toBe('/work/cards/a b.png');
    expect(['a.PNG', 'b.json', 'c.zip', 'd.card'].map(importContentType)).toEqual([
      'image/png',
      'application/json',
      'application/zip',
      'application/octet-stream',
    ]);
  });

  it('a world is one line: its id first, then the name (control characters dropped), kind and counts', () => {
    const world = { id: '0d6c1c9e-1234-4abc-8def-0123456789ab', name: 'ورن\n灯塔\u001b[31m 🧑‍🚀', revision: 3, archived: false, builtIn: false };
    expect(worldLine({ ...world, characters: 1, lorebookEntries: 2, openings: 0 })).toBe(
      '0d6c1c9e-1234-4abc-8def-0123456789ab — ورن 灯塔[31m 🧑‍🚀 · yours, revision 3 · 1 character, 2 lorebook entries, 0 openings',
    );
    expect(worldLine({ id: 'emberback', name: 'Emberback', revision: 1, archived: false, builtIn: true, characters: 3, lorebookEntries: 1, openings: 1 })).toBe(
      'emberback — Emberback · built-in · 3 characters, 1 lorebook entry, 1 opening',
    );
    // wrapped at any width, never past it, never inside the emoji
    for (const width of [28, 41, 60]) {
      const rows = hangingLines(worldLine({ ...world, characters: 1 }), width, '  - ')
        .split('\n')
        .filter(Boolean);
      for (const row of rows) expect(displayWidth(row)).toBeLessThanOrEqual(width);
      expect(rows.join('')).toContain('🧑‍🚀');
    }
  });
});

describe('wrapping', () => {
  it('caps the width at 100 and wraps streamed pieces as the whole text', () => {
    expect(readableWidth(undefined)).toBe(80);
    expect(readableWidth(250)).toBe(100);
    expect(readableWidth(40)).toBe(40);
    const text = 'The ferrywoman lifts her lantern; its light finds the ripples and the old rope of the landing.';
    let streamed = '';
    const wrapper = new StreamWrapper(24, (t) => (streamed += t));
    for (const piece of text.match(/.{1,5}/g)!) wrapper.push(piece); // pieces cut inside words
    wrapper.end();
    expect(streamed).toBe(wrapText(text, 24));
    for (const line of streamed.split('\n')) expect(displayWidth(line)).toBeLessThanOrEqual(24);
    expect(streamed.replace(/\n/g, ' ').trim()).toBe(text);
  });

  it('counts display columns (a dragon emoji is two) and cuts a word longer than a line', () => {
    const dragons = '🐉'.repeat(5); // 10 columns
    expect(wrapText(`${dragons} ${dragons}`, 10)).toBe(`${dragons}\n${dragons}\n`);
    expect(wrapText('🐉'.repeat(6), 11)).toBe(`${'🐉'.repeat(5)}\n🐉\n`); // never half an emoji
    expect(wrapText('abcdefghijkl', 5)).toBe('abcde\nfghij\nkl\n');
    expect(wrapText('龙在山中沉睡', 5)).toBe('龙在\n山中\n沉睡\n');
  });

  it('keeps what the model wrote between words, drops control characters, never moves a written word', () => {
    expect(wrapText('one   two\tthree', 40)).toBe('one   two three\n');
    expect(wrapText('red \u001b[31mtext\u0007 here\r\nnext', 40)).toBe('red [31mtext here\nnext\n');
    const written: string[] = [];
    const wrapper = new StreamWrapper(12, (t) => written.push(t));
    wrapper.push('The ferry');
    expect(written.join('')).toBe('The'); // "ferry" may go on: not written yet
    wrapper.push('woman waits');
    expect(written.join('')).toBe('The\nferrywoman');
    wrapper.end();
    expect(written.join('')).toBe('The\nferrywoman\nwaits\n');
  });
});

describe('activity lines after the story', () => {
  it('wrap as a hanging list item: every line within the width, continuation lines indented under the text', () => {
    const text = "world-init: Dragon's sleep 8 → 7; Village mood Wary but curious → Uneasy: the bell rang three times 🐉";
    const out = hangingLines(text, 40, '  · ');
    const lines = out.replace(/\n$/, '').split('\n');
    expect(lines[0].startsWith('  · world-init:')).toBe(true);
    for (const line of lines.slice(1)) expect(line.startsWith('    ') && !line.startsWith('     ')).toBe(true);
    for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(40);
    expect(lines.map((l) => l.slice(4)).join(' ')).toBe(text);
    expect(hangingLines('short', 40, '  · ')).toBe('  · short\n');
  });
});

describe('colour', () => {
  it('only on a terminal, and off when NO_COLOR has any value (an empty one is unset)', () => {
    expect(colorWanted({ isTTY: true }, {})).toBe(true);
    expect(colorWanted({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(colorWanted({ isTTY: true }, { NO_COLOR: '0' })).toBe(false);
    expect(colorWanted({ isTTY: true }, { NO_COLOR: '' })).toBe(true);
    expect(colorWanted({ isTTY: false }, {})).toBe(false);
    expect(colorWanted({}, {})).toBe(false);
  });

  it('by role; the story keeps the terminal colour; off is plain text', () => {
    expect(painter(true)('error', '! no')).toBe('\u001b[31m! no\u001b[39m');
    expect(painter(true)('bookkeeper', '  · memory: kept')).toBe('\u001b[2m  · memory: kept\u001b[22m');
    expect(painter(true)('story', 'The river')).toBe('The river');
    for (const role of ['player', 'status', 'bookkeeper', 'notice', 'error'] as const) expect(painter(false)(role, 'text')).toBe('text');
  });
});
