import { applyBudget, canonicalJson, elideResult, estimateFixed, estimateRequest, fixedText, frozenDigest, type LedgerCall } from '../..';
import { envelope, limitWithTarget, msg, request, single, type Item } from './fixtures';

/** Five tool groups with large results and reasoning, four history messages, the protected turn. */
function scenario(historySize = 500) {
  const head: Item[] = [
    msg('system', 'S'.repeat(100), 'system-prompt'),
    ...[1, 2, 3, 4].map((n) => msg('user', `h${n}`.padEnd(historySize, '.'), 'history')),
    msg('system', 'T'.repeat(100), 'protected'),
    msg('user', 'U'.repeat(50), 'protected'),
  ];
  const groups = [1, 2, 3, 4, 5].map((n) => single(`c${n}`, envelope(`found ${n}`, 2000), { thinking: 'r'.repeat(300) }));
  return { head, groups, items: [...head, ...groups.flat()] };
}

const callsOf = (g: readonly Item[]): LedgerCall[] =>
  g[0]!.message.toolCalls!.map((c, n) => ({ id: c.id, name: c.name, arguments: canonicalJson(c.arguments), result: g[n + 1]!.message.content }));
const elided = (g: readonly Item[]): Item[] =>
  g.map((i, n) => (n === 0 ? i : { ...i, message: { ...i.message, content: elideResult(i.message.content, 'en') } }));
const digest = (g: readonly Item[]): Item => msg('system', frozenDigest(callsOf(g), 'en'), 'loop');
const estimate = (items: readonly Item[]) => estimateRequest(request(items));
const target = (limit: number) => Math.floor((limit * 7) / 10);

describe('§5 budget: the steps, in order, each stopping at 70 % of the input limit', () => {
  it('over the limit, elision comes first and stops as soon as the estimate is at most 70 %: G1 and G2 elided, G3 (eligible) not, nothing collapsed', () => {
    const { head, groups, items } = scenario(100);
    const [g1, g2, g3, g4, g5] = groups as [Item[], Item[], Item[], Item[], Item[]];
    const expected = [...head, ...elided(g1), ...elided(g2), ...g3, ...g4, ...g5];
    const limit = limitWithTarget(estimate(expected));
    expect(estimate(items)).toBeGreaterThan(limit);
    expect(estimate([...head, ...elided(g1), ...g2, ...g3, ...g4, ...g5])).toBeGreaterThan(target(limit));

    const out = applyBudget(request(items, { limit }));
    expect(out.kind).toBe('fits');
    expect(out.messages).toEqual(expected.map((i) => i.message));
    expect(out.kinds).toEqual(expected.map((i) => i.kind));
    expect(out.ledger.entries).toEqual([
      { kind: 'elide', calls: callsOf(g1) },
      { kind: 'elide', calls: callsOf(g2) },
    ]);
    expect(out.stats).toEqual({ inputLimit: limit, before: estimate(items), after: estimate(expected), elided: 2, collapsed: 0, pruned: 0, truncated: 0 });
  });

  it('the elided envelope keeps ok and summary and says what was left out', () => {
    const { groups } = scenario();
    expect(elided(groups[0]!)[1]!.message.content).toBe('{"ok":true,"summary":"found 1","elided":"[omitted to save context]"}');
  });

  it('collapse comes after every eligible elision (the newest two are never elided) and stops at 70 %: G1 collapsed, G2-G3 elided, G4-G5 as they were', () => {
    const { head, groups, items } = scenario();
    const [g1, g2, g3, g4, g5] = groups as [Item[], Item[], Item[], Item[], Item[]];
    const expected = [...head, digest(g1), ...elided(g2), ...elided(g3), ...g4, ...g5];
    const limit = limitWithTarget(estimate(expected));
    expect(estimate(items)).toBeGreaterThan(limit);
    expect(estimate([...head, ...elided(g1), ...elided(g2), ...elided(g3), ...g4, ...g5])).toBeGreaterThan(target(limit));

    const out = applyBudget(request(items, { limit }));
    expect(out.messages).toEqual(expected.map((i) => i.message));
    expect(out.kinds).toEqual(expected.map((i) => i.kind));
    expect(out.ledger.entries.map((e) => [e.kind, e.calls[0]!.id])).toEqual([
      ['elide', 'c1'],
      ['elide', 'c2'],
      ['elide', 'c3'],
      ['collapse', 'c1'],
    ]);
    expect(out.stats).toMatchObject({ elided: 2, collapsed: 1, pruned: 0, truncated: 0 });
  });

  it('history pruning comes after every eligible collapse (the newest group keeps its reasoning) and stops at 70 %: h1 and h2 pruned, one trim marker in their place', () => {
    const { head, groups, items } = scenario();
    const [sys, h1, h2, h3, h4, turnContext, user] = head as [Item, Item, Item, Item, Item, Item, Item];
    const digests = groups.slice(0, 4).map(digest);
    const g5 = groups[4]!;
    const marker = msg('system', fixedText('en').budgetTrimmed, 'history');
    const expected = [sys, marker, h3, h4, turnContext, user, ...digests, ...g5];
    const limit = limitWithTarget(estimate(expected));
    expect(estimate([sys, marker, h2, h3, h4, turnContext, user, ...digests, ...g5])).toBeGreaterThan(target(limit));
    expect(estimate(items)).toBeGreaterThan(limit);
    expect(estimate([sys, h1, h2, h3, h4, turnContext, user, ...digests, ...g5])).toBeGreaterThan(target(limit));

    const out = applyBudget(request(items, { limit }));
    expect(out.messages).toEqual(expected.map((i) => i.message));
    expect(out.kinds).toEqual(expected.map((i) => i.kind));
    expect(out.messages.at(-2)!.thinking).toEqual({ text: 'r'.repeat(300), signature: 'sig' });
    expect(out.stats).toMatchObject({ collapsed: 4, pruned: 2, truncated: 0 });
  });

  it('head/tail truncation comes last, only when pruning could not fit, and cuts just enough to reach the input limit', () => {
    const { head, groups, items } = scenario();
    const [sys, , , , , turnContext, user] = head as [Item, Item, Item, Item, Item, Item, Item];
    const marker = msg('system', fixedText('en').budgetTrimmed, 'history');
    const allPruned = [sys, marker, turnContext, user, ...groups.slice(0, 4).map(digest), ...groups[4]!];
    const limit = estimate(allPruned) - 500;

    const out = applyBudget(request(items, { limit }));
    expect(out.kind).toBe('fits');
    expect(out.stats).toMatchObject({ collapsed: 4, pruned: 4, truncated: 1, after: limit });
    expect(out.messages.slice(0, -1)).toEqual(allPruned.slice(0, -1).map((i) => i.message));
    const original = groups[4]![1]!.message.content;
    const cut = out.messages.at(-1)!.content;
    const [headPart, tailPart] = cut.split(`\n${fixedText('en').budgetTruncated}\n`) as [string, string];
    expect(original.startsWith(headPart) && original.endsWith(tailPart)).toBe(true);
    expect(headPart.length - tailPart.length).toBeLessThanOrEqual(1);
  });

  it('the protected messages and the system prompt are never changed, even when everything else goes', () => {
    const { head, items } = scenario();
    const out = applyBudget(request(items, { limit: 600 }));
    for (const item of head.filter((i) => i.kind === 'protected' || i.kind === 'system-prompt')) expect(out.messages).toContain(item.message);
  });

  it('emergency mode makes the newest groups eligible: the same request elides and collapses G4 and G5 too', () => {
    const { items } = scenario();
    const normal = applyBudget(request(items, { limit: 3000 }));
    const emergency = applyBudget(request(items, { limit: 3000, mode: 'emergency' }));
    expect(normal.ledger.entries.some((e) => e.calls[0]!.id === 'c5')).toBe(false);
    expect(emergency.ledger.entries.filter((e) => e.calls[0]!.id === 'c5').map((e) => e.kind)).toEqual(['elide', 'collapse']);
    expect(emergency.stats.pruned).toBeLessThan(normal.stats.pruned);
  });

  it('a finalizer request uses the same trigger and 70 % stop as an ordinary one', () => {
    const { items } = scenario();
    for (const limit of [20_000, 12_000, 8_000, 4_000]) {
      expect(applyBudget(request(items, { limit, mode: 'finalizer' }))).toEqual(applyBudget(request(items, { limit })));
    }
  });

  it('under the input limit nothing is trimmed, even above 70 %', () => {
    const { items } = scenario();
    const limit = estimate(items);
    const out = applyBudget(request(items, { limit }));
    expect(out.kind).toBe('fits');
    expect(out.messages).toEqual(items.map((i) => i.message));
    expect(out.ledger.entries).toEqual([]);
  });

  it('still over after every step: an overflow with the estimate, the input limit, the window and the reserve', () => {
    const items = [msg('system', 'S'.repeat(100), 'system-prompt'), msg('user', 'U'.repeat(5000), 'protected')];
    const out = applyBudget(request(items, { limit: 1000 }));
    expect(out.kind).toBe('overflow');
    expect(out.kind === 'overflow' && out.text).toBe(
      'context overflow: the request is estimated at 5100 input tokens after every budget step (5100 before), over the input limit of 1000 tokens (context window 1100 − response reserve 100)',
    );
    expect(out.messages).toEqual(items.map((i) => i.message));
  });

  it('kinds must run parallel to messages', () => {
    const req = request([msg('user', 'x', 'protected')]);
    expect(() => applyBudget({ ...req, kinds: [] })).toThrow(expect.objectContaining({ code: 'BUDGET_KINDS_MISMATCH', category: 'internal' }));
  });
});

describe('§5 budget: estimate', () => {
  it('counts the response schema twice, tool definitions as JSON, tool calls, thinking and 1,500 tokens per image', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    const tool = { name: 't', description: 'd', parameters: {} };
    const base = request([msg('user', 'abcd', 'protected')]);
    expect(estimateRequest({ ...base, responseSchema: schema })).toBe(4 + 2 * JSON.stringify(schema).length);
    expect(estimateRequest({ ...base, tools: [tool] })).toBe(4 + JSON.stringify(tool).length);
    const assistant = {
      role: 'assistant' as const,
      content: 'x',
      toolCalls: [{ id: 'c', name: 'nm', arguments: { k: 1 } }],
      thinking: { text: 'think' },
      images: [{}, {}],
    };
    expect(estimateRequest({ ...base, messages: [assistant] })).toBe(1 + 2 + JSON.stringify({ k: 1 }).length + 5 + 3000);
  });

  it('the schema counted twice decides whether a request fits', () => {
    const items = [msg('user', 'x'.repeat(100), 'protected')];
    const schema = { d: 'y'.repeat(40) };
    const once = 100 + JSON.stringify(schema).length;
    expect(applyBudget({ ...request(items, { limit: once }), responseSchema: schema }).kind).toBe('overflow');
    expect(applyBudget({ ...request(items, { limit: once + JSON.stringify(schema).length }), responseSchema: schema }).kind).toBe('fits');
  });

  it("a caller's fixedTokens stands for the tools and the schema (counted once for several checks): the same outcome as counting them", () => {
    const items = [msg('user', 'x'.repeat(100), 'protected')];
    const schema = { d: 'y'.repeat(40) };
    const tool = { name: 't', description: 'd', parameters: {} };
    const base = { ...request(items, { limit: 100 + 2 * JSON.stringify(schema).length + JSON.stringify(tool).length }), responseSchema: schema, tools: [tool] };
    const fixedTokens = estimateFixed(base, base.estimator);
    expect(fixedTokens).toBe(2 * JSON.stringify(schema).length + JSON.stringify(tool).length);
    expect(applyBudget({ ...base, fixedTokens })).toEqual(applyBudget(base));
    expect(applyBudget(base).kind).toBe('fits');
    // the given figure is the one counted (here one token too many: over the limit)
    expect(applyBudget({ ...base, fixedTokens: fixedTokens + 1 }).kind).toBe('overflow');
  });
});
