import { applyBudget, canonicalJson, elideResult, findToolGroups, frozenDigest, type BudgetLedger, type LedgerCall } from '../..';
import { envelope, msg, request, single, type Item } from './fixtures';

const head: Item[] = [msg('system', 'S'.repeat(50), 'system-prompt'), msg('user', 'U'.repeat(20), 'protected')];
const g = (id: string, result = envelope(`found ${id}`, 800)) => single(id, result, { thinking: 'r'.repeat(100) });
const calls = (group: readonly Item[]): LedgerCall[] =>
  group[0]!.message.toolCalls!.map((c, n) => ({ id: c.id, name: c.name, arguments: canonicalJson(c.arguments), result: group[n + 1]!.message.content }));
const ledger = (...entries: BudgetLedger['entries']): BudgetLedger => ({ entries });
const resultOf = (messages: readonly { role: string; toolCallId?: string; content: string }[], id: string) =>
  messages.filter((m) => m.role === 'tool' && m.toolCallId === id).map((m) => m.content);

describe('§5 budget: the per-run ledger, by content identity', () => {
  const [a, b, c] = [g('a'), g('b'), g('c')];

  it('is replayed first even under the limit: an elision and a collapse from earlier requests apply again', () => {
    const out = applyBudget(
      request([...head, ...a, ...b, ...c], { ledger: ledger({ kind: 'elide', calls: calls(a) }, { kind: 'collapse', calls: calls(b) }) }),
    );
    expect(out.kind).toBe('fits');
    expect(resultOf(out.messages, 'a')).toEqual([elideResult(a[1]!.message.content, 'en')]);
    expect(out.messages).toContainEqual({ role: 'system', content: frozenDigest(calls(b), 'en') });
    expect(resultOf(out.messages, 'b')).toEqual([]);
    expect(resultOf(out.messages, 'c')).toEqual([c[1]!.message.content]);
    expect(out.stats).toMatchObject({ elided: 1, collapsed: 1, pruned: 0 });
  });

  it('an elision followed by a collapse of the same group replays as the collapse', () => {
    const out = applyBudget(request([...head, ...a, ...b], { ledger: ledger({ kind: 'elide', calls: calls(a) }, { kind: 'collapse', calls: calls(a) }) }));
    expect(out.messages).toEqual([head[0]!.message, head[1]!.message, { role: 'system', content: frozenDigest(calls(a), 'en') }, ...b.map((i) => i.message)]);
  });

  it('position does not matter: the same ledger finds its group after the groups were reordered, with the digest where the group is now', () => {
    const l = ledger({ kind: 'collapse', calls: calls(a) });
    const out = applyBudget(request([...head, ...b, ...c, ...a], { ledger: l }));
    expect(out.messages.at(-1)).toEqual({ role: 'system', content: frozenDigest(calls(a), 'en') });
    expect(out.messages.slice(2, -1)).toEqual([...b, ...c].map((i) => i.message));
  });

  it('argument key order does not matter (canonical JSON)', () => {
    const reordered = single('a', a[1]!.message.content, { args: { z: 1, q: 'a' }, thinking: 'r' });
    const sameArgs = single('a', a[1]!.message.content, { args: { q: 'a', z: 1 }, thinking: 'r' });
    const out = applyBudget(request([...head, ...reordered], { ledger: ledger({ kind: 'elide', calls: calls(sameArgs) }) }));
    expect(out.stats.elided).toBe(1);
  });

  it('a group a hook removed is silently skipped; nothing else is touched and the entry stays in the ledger', () => {
    const l = ledger({ kind: 'collapse', calls: calls(a) });
    const req = request([...head, ...b, ...c], { ledger: l });
    const out = applyBudget(req);
    expect(out.messages).toEqual(req.messages);
    expect(out.ledger.entries).toEqual(l.entries);
  });

  it('a group a hook duplicated is ambiguous: skipped, both copies stay as they are', () => {
    const req = request([...head, ...a, ...b, ...a], { ledger: ledger({ kind: 'elide', calls: calls(a) }) });
    expect(applyBudget(req).messages).toEqual(req.messages);
  });

  it('a call that reuses an id with another result is not the ledger’s group: not elided', () => {
    const reused = g('a', envelope('found something else', 800));
    const req = request([...head, ...reused, ...b], { ledger: ledger({ kind: 'elide', calls: calls(a) }, { kind: 'collapse', calls: calls(a) }) });
    expect(applyBudget(req).messages).toEqual(req.messages);
  });

  it('a group a hook rewrote (another result, another name or other arguments) is skipped', () => {
    for (const rewritten of [single('a', a[1]!.message.content, { name: 'other', thinking: 'r' }), single('a', a[1]!.message.content, { args: { q: 'x' } })]) {
      const req = request([...head, ...rewritten], { ledger: ledger({ kind: 'elide', calls: calls(a) }) });
      expect(applyBudget(req).messages).toEqual(req.messages);
    }
  });

  it('only grows: a later request returns the earlier entries first, then its own', () => {
    const first = applyBudget(request([...head, ...a, ...b, ...c], { limit: 2000 }));
    expect(first.ledger.entries.length).toBeGreaterThan(0);
    const d = g('d');
    const e = g('e');
    const second = applyBudget(request([...head, ...a, ...b, ...c, ...d, ...e], { limit: 2000, ledger: first.ledger }));
    expect(second.ledger.entries.slice(0, first.ledger.entries.length)).toEqual(first.ledger.entries);
    expect(second.ledger.entries.length).toBeGreaterThan(first.ledger.entries.length);
  });

  it('never makes a new decision about an ambiguous group (its entry could not be replayed)', () => {
    const out = applyBudget(request([...head, ...a, ...a, ...b, ...c], { limit: 1500 }));
    expect(out.ledger.entries.some((e) => e.calls[0]!.id === 'a')).toBe(false);
  });
});

describe('§5 budget: only complete, correctly ordered groups qualify', () => {
  const tool = (id: string, content = 'r', name = 'search'): Item => ({ message: { role: 'tool', content, toolCallId: id, toolName: name }, kind: 'loop' });
  const assistant = (...ids: string[]): Item => ({
    message: { role: 'assistant', content: '', toolCalls: ids.map((id) => ({ id, name: 'search', arguments: {} })) },
    kind: 'loop',
  });
  const groupsOf = (items: Item[]) =>
    findToolGroups(
      items.map((i) => i.message),
      items.map((i) => i.kind),
    ).map((gr) => gr.calls.map((c) => c.id));

  it('finds a group per assistant message whose results follow it one per call, in order', () => {
    expect(groupsOf([assistant('x', 'y'), tool('x'), tool('y'), msg('user', 'nudge', 'loop'), assistant('z'), tool('z')])).toEqual([['x', 'y'], ['z']]);
  });

  it('a missing result, a swapped order, an extra result, another tool name, a repeated id or a non-loop kind is no group', () => {
    expect(groupsOf([assistant('x', 'y'), tool('x')])).toEqual([]);
    expect(groupsOf([assistant('x', 'y'), tool('y'), tool('x')])).toEqual([]);
    expect(groupsOf([assistant('x'), tool('x'), tool('x')])).toEqual([]);
    expect(groupsOf([assistant('x'), tool('x', 'r', 'other')])).toEqual([]);
    expect(groupsOf([assistant('x', 'x'), tool('x'), tool('x')])).toEqual([]);
    expect(groupsOf([assistant('x'), { ...tool('x'), kind: 'history' }])).toEqual([]);
    expect(groupsOf([{ ...assistant('x'), kind: 'protected' }, tool('x')])).toEqual([]);
  });
});
