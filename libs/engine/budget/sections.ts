import type { BudgetMessageKind } from '../../context';
import type { ChatMessage } from '../../providers';

/**
 * The section of each message after a budget check, for prefix reports: a message the check kept
 * (the same object) keeps the section it had; one it made (an elided result, a frozen digest, a
 * trim marker, a truncated message) is `history` when its kind is history and has none otherwise.
 * No check (no budget): the sections as they were.
 */
export function carrySections(
  before: readonly ChatMessage[],
  sections: readonly (string | null)[],
  check: { messages: readonly ChatMessage[]; kinds: readonly BudgetMessageKind[] } | undefined,
): (string | null)[] {
  if (!check) return [...sections];
  const at = new Map(before.map((m, i) => [m, i]));
  return check.messages.map((m, i) => {
    const from = at.get(m);
    if (from !== undefined) return sections[from] ?? null;
    return check.kinds[i] === 'history' ? 'history' : check.kinds[i] === 'summary' ? 'summary' : null;
  });
}

/** The layout's message sections: up to the last message with a section (the loop's conversation after it has none). */
export function sentSections(sections: readonly (string | null)[]): string[] {
  let last = sections.length - 1;
  while (last >= 0 && sections[last] === null) last--;
  return sections.slice(0, last + 1).map((s) => s ?? 'history');
}
