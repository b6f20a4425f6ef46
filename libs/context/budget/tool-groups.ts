import { canonicalJson } from './canonical-json';
import type { BudgetMessage, BudgetMessageKind, LedgerCall } from './types';

/**
 * A complete, correctly ordered tool group of the agent loop: an assistant message with tool calls
 * immediately followed by exactly one tool message per call, in the calls' order, all of kind
 * `loop`. Anything else (a missing or extra result, another order, a result that names another
 * tool, ids repeated inside the group) is not a group: the budget leaves it alone.
 */
export interface ToolGroup {
  /** Index of the assistant message; the results are `start + 1 … end − 1`. */
  start: number;
  end: number;
  calls: LedgerCall[];
  /** The group's identity by content: call ids, tool names, canonical arguments, results. */
  key: string;
}

/** The identity of a group or a ledger entry by content, independent of its position. */
export function callsKey(calls: readonly LedgerCall[]): string {
  return JSON.stringify(calls.map((c) => [c.id, c.name, c.arguments, c.result]));
}

/** The complete tool groups of a request, oldest first. */
export function findToolGroups(messages: readonly BudgetMessage[], kinds: readonly BudgetMessageKind[]): ToolGroup[] {
  const groups: ToolGroup[] = [];
  for (let i = 0; i < messages.length; i++) {
    const group = groupAt(messages, kinds, i);
    if (group) {
      groups.push(group);
      i = group.end - 1;
    }
  }
  return groups;
}

function groupAt(messages: readonly BudgetMessage[], kinds: readonly BudgetMessageKind[], start: number): ToolGroup | null {
  const head = messages[start]!;
  const toolCalls = head.toolCalls ?? [];
  if (head.role !== 'assistant' || kinds[start] !== 'loop' || toolCalls.length === 0) return null;
  if (new Set(toolCalls.map((c) => c.id)).size !== toolCalls.length) return null;
  const end = start + 1 + toolCalls.length;
  if (end > messages.length) return null;
  const calls: LedgerCall[] = [];
  for (const [n, call] of toolCalls.entries()) {
    const result = messages[start + 1 + n]!;
    if (result.role !== 'tool' || kinds[start + 1 + n] !== 'loop' || result.toolCallId !== call.id) return null;
    if (result.toolName !== undefined && result.toolName !== call.name) return null;
    calls.push({ id: call.id, name: call.name, arguments: canonicalJson(call.arguments), result: result.content });
  }
  // Exactly one result per call: a further tool message right after makes the group malformed.
  if (messages[end]?.role === 'tool') return null;
  return { start, end, calls, key: callsKey(calls) };
}
