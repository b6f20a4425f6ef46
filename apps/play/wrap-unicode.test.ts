import wrapAnsi from 'wrap-ansi';
import { displayWidth, StreamWrapper, truncateToWidth, wrapText } from './wrap';

const graphemes = new Intl.Segmenter();
const clusters = (text: string) => Array.from(graphemes.segment(text), (s) => s.segment);
const noSpace = (text: string) => text.replace(/\s+/g, '');

/** Story texts in scripts a terminal draws differently from ASCII (each also as one long unbroken "word" to force cuts). */
const TEXTS: Record<string, string> = {
  chinese:
    '龙在山中沉睡了一千年。村里的钟声响了三次，渡船的老妇人举起灯笼，照亮了河面上的涟漪和码头上的旧绳索。她说：“它醒了。” 孩子们跑向河边，商人收起了货物。',
  japaneseAndKorean: 'ドラゴンは千年のあいだ山で眠っていた。鐘が三度鳴った。 용은 천 년 동안 산에서 잠들어 있었다. 종이 세 번 울렸다.',
  emojiZwj:
    'The family 👩‍👩‍👧‍👦 waits by the river 🏳️‍🌈 while the dragon 🐉 sleeps; the scribe 👨🏽‍💻 writes and two friends 🧑‍🤝‍🧑 wave. 👩‍👩‍👧‍👦👩‍👩‍👧‍👦👩‍👩‍👧‍👦👩‍👩‍👧‍👦👩‍👩‍👧‍👦👩‍👩‍👧‍👦👩‍👩‍👧‍👦👩‍👩‍👧‍👦👩‍👩‍👧‍👦👩‍👩‍👧‍👦👩‍👩‍👧‍👦👩‍👩‍👧‍👦👩‍👩‍👧‍👦👩‍👩‍👧‍👦👩‍👩‍👧‍👦👩‍👩‍👧‍👦👩‍👩‍👧‍👦👩‍👩‍👧‍👦👩‍👩‍👧‍👦👩‍👩‍👧‍👦👩‍👩‍👧‍👦👩‍👩‍👧‍👦',
  combiningMarks: `Zoe\u0308 read "Tie\u0302\u0301ng Vie\u0323\u0302t" aloud; the q\u0303 and x\u0304\u0331 marks stack, Z\u0351\u0336a\u0337l\u0334g\u0335o\u0338 too. ${'q\u0303'.repeat(50)} ${'n\u0303\u0301'.repeat(45)}`,
  arabic: 'استيقظ التنين بعد ألف عام، ورنّ الجرس ثلاث مرات في القرية الهادئة عند النهر. بِسْمِ اللَّهِ الرَّحْمَٰنِ الرَّحِيمِ قالت المرأة العجوز وهي ترفع الفانوس فوق الماء.',
  hebrew: 'הדרקון ישן אלף שנה בהר, והפעמון צלצל שלוש פעמים בכפר. בְּרֵאשִׁית בָּרָא אֱלֹהִים אֵת הַשָּׁמַיִם וְאֵת הָאָרֶץ — אמרה המעבורתנית.',
};

/** The text in pieces of 3 code points, as streamed deltas can come: ZWJ sequences and clusters are cut between pieces. */
const pieces = (text: string) => Array.from(text).reduce<string[]>((acc, ch, i) => (i % 3 === 0 ? acc.push(ch) : (acc[acc.length - 1] += ch), acc), []);

/**
 * Where the output's words differ from the text's: each word of the text must come back whole, or,
 * only if it is wider than a line, in pieces on consecutive rows.
 */
function brokenWords(out: string, text: string, width: number): string[] {
  const tokens = out.split(/\s+/).filter(Boolean);
  const problems: string[] = [];
  for (const word of text.split(/\s+/).filter(Boolean)) {
    let got = tokens.shift() ?? '';
    let pieces = 1;
    while (got !== word && tokens.length > 0 && word.startsWith(got)) {
      got += tokens.shift();
      pieces++;
    }
    if (got !== word) problems.push(`${word} came back as ${got}`);
    else if (pieces > 1 && displayWidth(word) <= width) problems.push(`${word} fits a line but was cut in ${pieces}`);
  }
  if (tokens.length > 0) problems.push(`extra: ${tokens.join(' ')}`);
  return problems;
}

describe.each([40, 80])('wrapping at %i columns', (width) => {
  it.each(Object.keys(TEXTS))('%s: every line fits, no grapheme cluster is cut, the text comes back', (name) => {
    const text = TEXTS[name];
    const out = wrapText(text, width);
    const lines = out.replace(/\n$/, '').split('\n');
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(width);
    // each line segmented on its own gives the clusters of the whole text: no cluster straddles a break
    expect(lines.flatMap((line) => clusters(noSpace(line)))).toEqual(clusters(noSpace(text.normalize('NFC'))));
    // breaks are at spaces (dropped) or inside a word longer than a line (cut between clusters); nothing else changes
    expect(noSpace(out)).toBe(noSpace(text.normalize('NFC')));
    expect(brokenWords(out, text.normalize('NFC'), width)).toEqual([]);
    // streamed in pieces, the rows are wrap-ansi's rows for the whole text
    let streamed = '';
    const wrapper = new StreamWrapper(width, (t) => (streamed += t));
    for (const piece of pieces(text)) wrapper.push(piece);
    wrapper.end();
    expect(streamed).toBe(out);
    expect(out).toBe(`${wrapAnsi(text, width, { hard: true })}\n`);
  });

  it('uses the width: wide text fills at most the columns, ASCII fills them', () => {
    const ascii = wrapText('word '.repeat(60), width).split('\n');
    expect(Math.max(...ascii.map(displayWidth))).toBeGreaterThan(width - 5);
    const cjk = wrapText('龙'.repeat(100), width).split('\n');
    expect(cjk[0]).toBe('龙'.repeat(width / 2));
  });
});

describe('truncating to a width', () => {
  it('cuts between grapheme clusters by display columns', () => {
    expect(truncateToWidth('👩‍👩‍👧‍👦👩‍👩‍👧‍👦', 3)).toBe('👩‍👩‍👧‍👦');
    expect(truncateToWidth('龙在山', 5)).toBe('龙在');
    expect(truncateToWidth('Zoe\u0308!', 3)).toBe('Zoe\u0308');
    expect(truncateToWidth('short', 40)).toBe('short');
  });
});

describe('streaming a run without spaces', () => {
  it('writes each full row of Chinese text as it fills, not at the end of the paragraph; the same rows as wrapping it whole', () => {
    const text = '龙在河边的渡口等了很久，直到雾散开，才看见对岸的灯火一盏一盏亮起来。'.repeat(4);
    let out = '';
    const wrapper = new StreamWrapper(40, (t) => (out += t));
    const pieces = [...new Intl.Segmenter().segment(text)].map((s) => s.segment);
    let rowsBeforeEnd = 0;
    for (const piece of pieces) {
      wrapper.push(piece);
      rowsBeforeEnd = out.split('\n').length - 1;
    }
    expect(rowsBeforeEnd).toBeGreaterThanOrEqual(Math.floor(displayWidth(text) / 40) - 1);
    wrapper.end();
    expect(out).toBe(`${wrapAnsi(text, 40, { hard: true })}\n`);
    expect(out.split('\n').every((line) => displayWidth(line) <= 40)).toBe(true);
  });
});
