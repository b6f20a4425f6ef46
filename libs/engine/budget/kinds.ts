import type { AssembledContext, BudgetMessageKind } from '../../context';
import type { ChatMessage } from '../../providers';

/**
 * What each message of the assembled request is (spec §5 "Protected content"), parallel to
 * `requestMessages(context)`: the system prompt, then per context message the summary envelope,
 * the protected current turn (`context.protectedIndexes`: the turn context before it, this turn's
 * story text and ending hint), or history.
 */
export function contextKinds(context: Pick<AssembledContext, 'messageSections' | 'protectedIndexes'>): BudgetMessageKind[] {
  const kept = new Set(context.protectedIndexes);
  return ['system-prompt', ...context.messageSections.map((s, i): BudgetMessageKind => (s === 'summary' ? 'summary' : kept.has(i) ? 'protected' : 'history'))];
}

/**
 * The kinds of the messages the PreLLMCall hooks returned: a message the hooks kept (the same
 * object, or one with the same role and content: hook results come back as JSON) keeps the kind it
 * had before them, each earlier message matched at most once and in order; a message they added is `other`.
 */
export function hookedKinds(before: readonly ChatMessage[], kinds: readonly BudgetMessageKind[], after: readonly ChatMessage[]): BudgetMessageKind[] {
  const used = new Set<number>();
  let from = 0;
  return after.map((m) => {
    const at = findMatch(before, used, from, m) ?? findMatch(before, used, 0, m);
    if (at === undefined) return 'other';
    used.add(at);
    from = at + 1;
    return kinds[at];
  });
}

function findMatch(list: readonly ChatMessage[], used: ReadonlySet<number>, from: number, m: ChatMessage): number | undefined {
  for (let i = from; i < list.length; i++) if (!used.has(i) && list[i] === m) return i;
  for (let i = from; i < list.length; i++) if (!used.has(i) && list[i].role === m.role && list[i].content === m.content) return i;
  return undefined;
}
