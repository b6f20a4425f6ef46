import type { AssembledContext, BudgetMessageKind, BuildContextParams, ContextMessage, MessageSectionName } from '../../context';
import type { ChatMessage } from '../../providers';
import { carrySections } from './sections';

/**
 * The assembly as the budget check at assembly left it (spec §5, the first of the three checks),
 * for the PostContextAssembly hooks (`BuildContextParams.trimmedAssembly`). `sent` is
 * `requestMessages(context)` (the system prompt first), `check` the check's outcome on it. A
 * message the check kept is the assembled message itself (its images included); one it made (the
 * trim marker, a truncated summary envelope) is new, with the section its kind gives it.
 */
export function trimmedAssembly(
  context: Pick<AssembledContext, 'messages' | 'messageSections'>,
  sent: readonly ChatMessage[],
  check: { messages: readonly ChatMessage[]; kinds: readonly BudgetMessageKind[] },
): NonNullable<BuildContextParams['trimmedAssembly']> {
  const assembledAt = new Map(sent.map((m, i) => [m, i - 1]));
  const sections = carrySections(sent, ['system', ...context.messageSections], check).slice(1);
  const messages = check.messages.slice(1).map((m): ContextMessage => {
    const at = assembledAt.get(m);
    // the assembly holds no tool message, so neither does what the check made of it
    return at !== undefined && at >= 0 ? context.messages[at] : { role: m.role as ContextMessage['role'], content: m.content };
  });
  return { messages, messageSections: sections.map((s) => (s ?? 'history') as MessageSectionName) };
}
