import fc from 'fast-check';
import { applyBudget, estimateRequest, estimateTokens, EMPTY_LEDGER, type BudgetMessage, type BudgetMessageKind, type BudgetRequest } from '../..';
import { group, msg, type Item } from './fixtures';

const text = (maxLength: number) =>
  fc.oneof(fc.string({ maxLength }), fc.string({ unit: 'grapheme', maxLength }), fc.string({ unit: 'binary', maxLength }), fc.constant('x'.repeat(maxLength)));

const result = fc.oneof(
  fc.record({ summary: text(60), data: text(600) }).map(({ summary, data }) => JSON.stringify({ ok: true, summary, data: { data } })),
  text(600).map((data) => JSON.stringify({ ok: true, data })),
  fc.record({ code: fc.constantFrom('TOOL_FAILED', 'NOT_FOUND'), message: text(80) }).map((error) => JSON.stringify({ ok: false, error })),
  text(600),
  fc.array(fc.integer(), { maxLength: 50 }).map((a) => JSON.stringify(a)),
);

const call = fc.record({
  id: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'),
  name: fc.constantFrom('search', 'get-character', 'emit-event'),
  args: fc.dictionary(fc.string({ maxLength: 5 }), fc.oneof(fc.integer(), text(80))),
  result,
});

const toolGroup = fc
  .record({ calls: fc.uniqueArray(call, { minLength: 1, maxLength: 3, selector: (c) => c.id }), thinking: fc.option(text(200), { nil: undefined }) })
  .map(({ calls, thinking }) => group(calls, thinking === undefined ? {} : { thinking }));

const loopPart = fc.oneof(
  { weight: 5, arbitrary: toolGroup },
  { weight: 1, arbitrary: text(100).map((t) => [msg('user', t, 'loop')]) },
  { weight: 1, arbitrary: text(100).map((t) => [msg('user', t, 'other')]) },
);

const historyPart = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(fc.constantFrom('user' as const, 'assistant' as const), text(400)).map(([role, t]) => [msg(role, t, 'history')]) },
  { weight: 1, arbitrary: fc.tuple(call, text(100)).map(([c, t]) => [...group([c], { kind: 'history' }), msg('assistant', t, 'history')]) },
);

const requestArb = fc
  .record({
    system: text(300),
    summary: fc.option(text(1500), { nil: undefined }),
    history: fc.array(historyPart, { maxLength: 8 }),
    turnContext: text(200),
    turnContextKind: fc.constantFrom<BudgetMessageKind>('protected', 'history'),
    user: text(200),
    loop: fc.array(loopPart, { maxLength: 10 }),
    window: fc.integer({ min: 50, max: 6000 }),
    reserveShare: fc.double({ min: 0.01, max: 0.9, noNaN: true }),
    mode: fc.constantFrom('normal' as const, 'finalizer' as const, 'emergency' as const),
    locale: fc.constantFrom('en' as const, 'zh-Hans' as const),
    schema: fc.option(fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 40 })), { nil: undefined }),
  })
  .map((r): BudgetRequest<BudgetMessage> => {
    const items: Item[] = [
      msg('system', r.system, 'system-prompt'),
      ...(r.summary === undefined ? [] : [msg('user', r.summary, 'summary')]),
      ...r.history.flat(),
      msg('system', r.turnContext, r.turnContextKind),
      msg('user', r.user, 'protected'),
      ...r.loop.flat(),
    ];
    const responseReserve = Math.max(1, Math.min(r.window - 1, Math.floor(r.window * r.reserveShare)));
    return {
      messages: items.map((i) => i.message),
      kinds: items.map((i) => i.kind),
      limits: { contextWindow: r.window, responseReserve },
      estimator: estimateTokens,
      ledger: EMPTY_LEDGER,
      locale: r.locale,
      mode: r.mode,
      ...(r.schema ? { responseSchema: r.schema } : {}),
    };
  });

/** What a hook may do to the request between two calls: nothing, remove a message range, or duplicate one. */
const hook = fc.record({ op: fc.constantFrom('none', 'remove', 'duplicate'), at: fc.nat(), length: fc.integer({ min: 1, max: 3 }) });

function applyHook(req: BudgetRequest<BudgetMessage>, h: { op: string; at: number; length: number }): BudgetRequest<BudgetMessage> {
  const loopStart = req.kinds.indexOf('protected') + 1;
  const n = req.messages.length - loopStart;
  if (h.op === 'none' || n <= 0) return req;
  const from = loopStart + (h.at % n);
  const to = Math.min(req.messages.length, from + h.length);
  const pick = <T>(xs: readonly T[]) =>
    h.op === 'remove' ? [...xs.slice(0, from), ...xs.slice(to)] : [...xs.slice(0, to), ...xs.slice(from, to), ...xs.slice(to)];
  return { ...req, messages: pick(req.messages), kinds: pick(req.kinds) };
}

/** True when every tool message follows (across other tool messages only) an assistant message with its call. */
function paired(messages: readonly BudgetMessage[]): boolean {
  return messages.every((m, i) => {
    if (m.role !== 'tool') return true;
    let j = i - 1;
    while (j >= 0 && messages[j]!.role === 'tool') j--;
    return messages[j]?.toolCalls?.some((c) => c.id === m.toolCallId) === true;
  });
}

describe('§5 budget property: random tool-heavy requests', () => {
  it('fit under the input limit or overflow; protected messages untouched; input not mutated; tool results stay with their calls; the returned ledger replays to the same request', () => {
    fc.assert(
      fc.property(requestArb, fc.integer({ min: 20, max: 6000 }), hook, (base, earlierWindow, h) => {
        // An earlier request of the run (another window) leaves a ledger; a hook may then remove or duplicate messages.
        const earlier = applyBudget({ ...base, limits: { contextWindow: earlierWindow + 10, responseReserve: 10 } });
        const req = { ...applyHook(base, h), ledger: earlier.ledger };
        const snapshot = structuredClone({ messages: req.messages, kinds: req.kinds, ledger: req.ledger });

        const out = applyBudget(req);
        const limit = req.limits.contextWindow - req.limits.responseReserve;

        expect(structuredClone({ messages: req.messages, kinds: req.kinds, ledger: req.ledger })).toEqual(snapshot);
        expect(out.kinds.length).toBe(out.messages.length);
        expect(out.stats.after).toBe(estimateRequest({ ...req, messages: out.messages }));
        if (out.kind === 'fits') expect(out.stats.after).toBeLessThanOrEqual(limit);
        else expect(out.stats.after).toBeGreaterThan(limit);

        // Protected messages: all present, in order, the very same objects (byte-unchanged).
        const protectedIn = req.messages.filter((_, i) => req.kinds[i] === 'protected');
        expect(out.messages.filter((_, i) => out.kinds[i] === 'protected')).toEqual(protectedIn);
        protectedIn.forEach((m) => expect(out.messages).toContain(m));
        expect(out.messages[0]).toBe(req.messages[0]);
        const firstProtected = req.kinds.indexOf('protected');
        if (firstProtected > 0 && req.messages[firstProtected - 1]!.role === 'system') expect(out.messages).toContain(req.messages[firstProtected - 1]);

        // Every tool result still follows the assistant message that made its call (when the request had it so).
        if (paired(req.messages)) expect(paired(out.messages)).toBe(true);

        // The ledger only grows.
        expect(out.ledger.entries.slice(0, req.ledger.entries.length)).toEqual(req.ledger.entries);

        // Replaying the returned ledger on the same request adds nothing; without pruning it gives the same messages.
        const again = applyBudget({ ...req, ledger: out.ledger });
        expect(again.ledger.entries).toEqual(out.ledger.entries);
        if (out.stats.pruned === 0) {
          expect(again.messages).toEqual(out.messages);
          expect(again.kinds).toEqual(out.kinds);
        }
      }),
      { numRuns: 300 },
    );
  });
});

/**
 * A run as the agent loop makes it: the canonical conversation only grows (each step appends the
 * reply's tool group), every step's request is built from it with the ledger the earlier steps
 * returned, and whatever the budget does, the canonical messages stay as recorded.
 */
describe('§5 budget property: random tool-heavy runs', () => {
  const run = fc.record({
    head: requestArb,
    steps: fc.array(toolGroup, { minLength: 1, maxLength: 12 }),
    window: fc.integer({ min: 400, max: 8000 }),
  });
  it('every request of the run fits or the run stops with an overflow; protected messages present; canonical records unchanged; the ledger only grows', () => {
    fc.assert(
      fc.property(run, ({ head, steps, window }) => {
        const loopStart = head.kinds.indexOf('protected') + 1;
        const canonical: BudgetMessage[] = head.messages.slice(0, loopStart).map((m) => structuredClone(m));
        const kinds: BudgetMessageKind[] = head.kinds.slice(0, loopStart);
        const limits = { contextWindow: window, responseReserve: Math.floor(window / 8) };
        const limit = limits.contextWindow - limits.responseReserve;
        let ledger = EMPTY_LEDGER;
        for (const step of steps) {
          for (const item of step) {
            canonical.push(item.message);
            kinds.push(item.kind);
          }
          const recorded = structuredClone(canonical);
          const out = applyBudget({ ...head, messages: canonical, kinds, limits, ledger });
          expect(canonical).toEqual(recorded);
          expect(out.ledger.entries.slice(0, ledger.entries.length)).toEqual(ledger.entries);
          canonical.forEach((m, i) => kinds[i] === 'protected' && expect(out.messages).toContain(m));
          if (out.kind === 'overflow') {
            expect(out.stats.after).toBeGreaterThan(limit);
            return; // the run stops: nothing is sent
          }
          expect(out.stats.after).toBeLessThanOrEqual(limit);
          ledger = out.ledger;
        }
      }),
      { numRuns: 200 },
    );
  });
});
