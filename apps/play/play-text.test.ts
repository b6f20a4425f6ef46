import { HELP_TEXT, parseLine } from './commands';
import { hangingLines, readableWidth, StreamWrapper, wrapText } from './wrap';

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
    for (const line of streamed.split('\n')) expect(Array.from(line).length).toBeLessThanOrEqual(24);
    expect(streamed.replace(/\n/g, ' ').trim()).toBe(text);
  });

  it('counts code points, not UTF-16 units, and cuts a word longer than a line', () => {
    const emoji = '🐉'.repeat(10);
    expect(wrapText(`${emoji} ${emoji}`, 10)).toBe(`${emoji}\n${emoji}\n`);
    expect(wrapText('abcdefghijkl', 5)).toBe('abcde\nfghij\nkl\n');
  });
});

describe('activity lines after the story', () => {
  it('wrap as a hanging list item: every line within the width, continuation lines indented under the text', () => {
    const text = "world-init: Dragon's sleep 8 → 7; Village mood Wary but curious → Uneasy: the bell rang three times 🐉";
    const out = hangingLines(text, 40, '  · ');
    const lines = out.replace(/\n$/, '').split('\n');
    expect(lines[0].startsWith('  · world-init:')).toBe(true);
    for (const line of lines.slice(1)) expect(line.startsWith('    ') && !line.startsWith('     ')).toBe(true);
    for (const line of lines) expect(Array.from(line).length).toBeLessThanOrEqual(40);
    expect(lines.map((l) => l.slice(4)).join(' ')).toBe(text);
    expect(hangingLines('short', 40, '  · ')).toBe('  · short\n');
  });
});
