import { codePointLength, isWellFormedText } from '../../../text';
import { applyBudget, elideResult, fixedText, frozenDigest, truncateMiddle, type LedgerCall } from '../..';
import { group, msg, request, type Item } from './fixtures';

const longArgs = JSON.stringify({ query: 'the old lighthouse keeper and the storm that broke the harbour wall in the winter of the long night', limit: 20 });
const calls: LedgerCall[] = [
  { id: 'c1', name: 'get-character', arguments: '{"id":"mara"}', result: '{"ok":true,"summary":"Mara, the smith\'s daughter","data":{"name":"Mara"}}' },
  { id: 'c2', name: 'world-dimensions', arguments: '{}', result: '{"ok":true,"data":{"season":"winter","weather":"storm\\nwind"}}' },
  { id: 'c3', name: 'emit-event', arguments: '{"topic":"x"}', result: '{"ok":false,"error":{"code":"EVENT_INVALID","message":"payload does not match"}}' },
  { id: 'c4', name: 'search', arguments: longArgs, result: `plain text result ${'z'.repeat(100)}` },
  { id: 'c5', name: 'lookup', arguments: '{"k":"灯塔"}', result: '{"ok":true,"summary":"找到灯塔守护者的记录，共三条。"}' },
];

describe('§5 frozen digest: golden text', () => {
  it('en', () => {
    expect(frozenDigest(calls, 'en')).toBe(
      [
        '[Earlier tool calls, collapsed to save context:]',
        '- get-character {"id":"mara"} → ok: Mara, the smith\'s daughter',
        '- world-dimensions {} → ok: {"season":"winter","weather":"storm\\nwind"}',
        '- emit-event {"topic":"x"} → failed: EVENT_INVALID',
        '- search {"query":"the old lighthouse keeper and the storm that broke the harbour wall in the winter of the long night","limit":… → ok: plain text result zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz…',
        '- lookup {"k":"灯塔"} → ok: 找到灯塔守护者的记录，共三条。',
      ].join('\n'),
    );
  });

  it('zh-Hans: the header is Chinese; ok, failed, names and codes are not translated', () => {
    expect(frozenDigest(calls, 'zh-Hans')).toBe(['[较早的工具调用（为节省上下文已折叠）：]', ...frozenDigest(calls, 'en').split('\n').slice(1)].join('\n'));
    expect(frozenDigest(calls.slice(2, 3), 'zh-Hans')).toBe(
      ['[较早的工具调用（为节省上下文已折叠）：]', '- emit-event {"topic":"x"} → failed: EVENT_INVALID'].join('\n'),
    );
    expect(frozenDigest(calls.slice(4), 'zh-Hans')).toBe(
      ['[较早的工具调用（为节省上下文已折叠）：]', '- lookup {"k":"灯塔"} → ok: 找到灯塔守护者的记录，共三条。'].join('\n'),
    );
  });

  it('previews are cut by code points (120 for arguments, 80 for the summary, the ellipsis included) without breaking an emoji', () => {
    const emoji = '👩‍👩‍👧';
    const digest = frozenDigest(
      [{ id: 'i', name: 't', arguments: JSON.stringify({ s: emoji.repeat(60) }), result: JSON.stringify({ ok: true, summary: '字'.repeat(200) }) }],
      'en',
    );
    const [args, summary] = digest.split('\n')[1]!.slice('- t '.length).split(' → ok: ') as [string, string];
    expect(codePointLength(args)).toBeLessThanOrEqual(120);
    expect(args.endsWith(`${emoji}…`)).toBe(true);
    expect(summary).toBe(`${'字'.repeat(79)}…`);
    expect(isWellFormedText(digest)).toBe(true);
  });

  it('is deterministic and holds no ids', () => {
    expect(frozenDigest(calls, 'en')).toBe(
      frozenDigest(
        calls.map((c) => ({ ...c })),
        'en',
      ),
    );
    expect(frozenDigest(calls, 'en')).not.toMatch(/c[1-5]/u);
  });
});

describe('§5 elision', () => {
  const marker = fixedText('en').budgetOmitted;

  it('an envelope keeps ok, summary, error and staged; the other data becomes one "elided" member', () => {
    const result = JSON.stringify({ ok: true, summary: 's', data: { big: 'x'.repeat(200) }, staged: { n: 1 }, more: [1, 2, 3] });
    expect(elideResult(result, 'en')).toBe(`{"ok":true,"summary":"s","staged":{"n":1},"elided":"${marker}"}`);
    const failed = JSON.stringify({ ok: false, error: { code: 'TOOL_FAILED', message: 'm'.repeat(100) }, data: 'x'.repeat(100) });
    expect(elideResult(failed, 'zh-Hans')).toBe(`{"ok":false,"error":{"code":"TOOL_FAILED","message":"${'m'.repeat(100)}"},"elided":"[为节省上下文已省略]"}`);
  });

  it('a string result (plain text or a JSON string) becomes the omission marker', () => {
    expect(elideResult('y'.repeat(100), 'en')).toBe(marker);
    expect(elideResult(JSON.stringify('y'.repeat(100)), 'en')).toBe(marker);
  });

  it('a non-string result (JSON array, number, boolean, null), an envelope with nothing else, and a result shorter than its elision stay unchanged', () => {
    for (const content of [
      JSON.stringify(Array.from({ length: 50 }, (_, i) => i)),
      '12345678901234567890123456789012345',
      'true',
      'null',
      '{"ok":true,"summary":"only"}',
      'short',
    ])
      expect(elideResult(content, 'en')).toBe(content);
  });
});

describe('§5 history pruning', () => {
  const sys = msg('system', 'S'.repeat(20), 'system-prompt');
  const user = msg('user', 'U'.repeat(20), 'protected');
  const h = (n: number, size = 200) => msg(n % 2 ? 'user' : 'assistant', `h${n}`.padEnd(size, '.'), 'history');

  it('never splits a tool call from its result: an assistant message with calls in history goes with its results, or not at all', () => {
    const pair = group([{ id: 'p', name: 'search', args: {}, result: 'r'.repeat(300) }], { kind: 'history' });
    const items = [sys, h(1), ...pair, h(2), user];
    const out = applyBudget(request(items, { limit: 700 }));
    expect(out.stats.pruned).toBe(3);
    expect(out.messages.some((m) => m.toolCallId === 'p' || m.toolCalls !== undefined)).toBe(false);
    expect(out.messages).toContain(items[4]!.message);
    // A pair whose result is protected stays whole: its assistant message is not pruned alone.
    const mixed = [sys, pair[0]!, { ...pair[1]!, kind: 'protected' as const }, h(1), h(2), user];
    const kept = applyBudget(request(mixed, { limit: 300 }));
    expect(kept.messages).toContain(pair[0]!.message);
    expect(kept.messages).toContain(pair[1]!.message);
  });

  it('keeps the system message right before the protected turn, the summary envelope and other messages; one marker where the pruned ones were', () => {
    const summary = msg('user', '<compacted_history>…</compacted_history>', 'summary');
    const hooked = msg('user', 'from a hook', 'other');
    const turnContext = msg('system', 'T'.repeat(50), 'history');
    const items = [sys, summary, h(1), h(2), hooked, h(3), turnContext, user];
    const out = applyBudget(request(items, { limit: 200 }));
    const marker = { role: 'system', content: fixedText('en').budgetTrimmed };
    expect(out.messages).toEqual([sys, summary, marker, hooked, turnContext, user].map((i) => ('message' in i ? i.message : i)));
    expect(out.kinds).toEqual(['system-prompt', 'summary', 'history', 'other', 'history', 'protected']);
    expect(out.stats.pruned).toBe(3);
  });

  it('the marker holds no count: pruning more or fewer messages writes the same marker (zh-Hans too)', () => {
    const items = [sys, h(1), h(2), h(3), h(4), user];
    const few = applyBudget(request(items, { limit: 800, locale: 'zh-Hans' }));
    const many = applyBudget(request(items, { limit: 200, locale: 'zh-Hans' }));
    expect(few.stats.pruned).toBeLessThan(many.stats.pruned);
    const markers = (o: typeof few) => o.messages.filter((_, i) => o.kinds[i] === 'history' && o.messages[i]!.role === 'system');
    expect(markers(few)).toEqual([{ role: 'system', content: '[此处较早的消息为节省上下文已移除。]' }]);
    expect(markers(many)).toEqual(markers(few));
  });
});

describe('§5 head/tail truncation', () => {
  const marker = fixedText('en').budgetTruncated;

  it('keeps a head and a tail of at most `keep` code points with the marker between', () => {
    expect(truncateMiddle('abcdefghij', 5, 'M')).toBe('abc\nM\nij');
    expect(truncateMiddle('abc', 5, 'M')).toBe('abc');
  });

  it('never splits a surrogate pair, a ZWJ sequence, a flag or a combining sequence', () => {
    const texts = ['👩‍👩‍👧'.repeat(20), '🇯🇵🇫🇷'.repeat(20), 'e\u0301'.repeat(30), '汉字𠀀'.repeat(20), 'a😀b'.repeat(30)];
    for (const text of texts) {
      for (let keep = 0; keep < 40; keep++) {
        const cut = truncateMiddle(text, keep, marker);
        expect(isWellFormedText(cut)).toBe(true);
        if (keep >= codePointLength(text)) {
          expect(cut).toBe(text);
          continue;
        }
        const [headPart, tailPart] = cut.split(`\n${marker}\n`) as [string, string];
        expect(text.startsWith(headPart) && text.endsWith(tailPart)).toBe(true);
        const clusters = (s: string) => [...new Intl.Segmenter('und', { granularity: 'grapheme' }).segment(s)].map((x) => x.segment);
        const all = new Set(clusters(text));
        for (const cl of [...clusters(headPart), ...clusters(tailPart)]) expect(all.has(cl)).toBe(true);
        expect(codePointLength(headPart) + codePointLength(tailPart)).toBeLessThanOrEqual(keep);
      }
    }
  });

  it('truncates the compacted-history envelope too, and never a protected message', () => {
    const summary = msg('user', `<compacted_history>${'s'.repeat(3000)}</compacted_history>`, 'summary');
    const protectedBig = msg('user', 'P'.repeat(1000), 'protected');
    const items: Item[] = [msg('system', 'S', 'system-prompt'), summary, protectedBig];
    const out = applyBudget(request(items, { limit: 1500, locale: 'zh-Hans' }));
    expect(out.kind).toBe('fits');
    expect(out.stats).toMatchObject({ truncated: 1, after: 1500 });
    expect(out.messages[1]!.content).toContain('\n[……为节省上下文已删去中间部分……]\n');
    expect(out.messages[1]!.content.startsWith('<compacted_history>')).toBe(true);
    expect(out.messages[1]!.content.endsWith('</compacted_history>')).toBe(true);
    expect(out.messages[2]).toBe(protectedBig.message);
  });
});

describe('§5 a plugin tool result: its summary sits in the envelope data', () => {
  const result = JSON.stringify({ ok: true, data: { summary: 'Shelf 2: 5 ledgers', ledgers: 'x'.repeat(400) } });
  it('elision keeps it as the envelope summary', () => {
    expect(elideResult(result, 'en')).toBe('{"ok":true,"summary":"Shelf 2: 5 ledgers","elided":"[omitted to save context]"}');
  });
  it('the digest line reads it', () => {
    expect(frozenDigest([{ id: 'c1', name: 'search', arguments: '{"shelf":2}', result }], 'en')).toContain('- search {"shelf":2} → ok: Shelf 2: 5 ledgers');
  });
});
