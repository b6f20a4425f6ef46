import type { BudgetLedger, BudgetMessage, BudgetMessageKind, BudgetMode, BudgetRequest } from '..';
import { EMPTY_LEDGER } from '..';
import type { Locale } from '../../../plugins-sdk';

/** One token per code point: easy arithmetic in the step tests. */
export const perCodePoint = (text: string): number => Array.from(text).length;

export type Item = { message: BudgetMessage; kind: BudgetMessageKind };

export const msg = (role: BudgetMessage['role'], content: string, kind: BudgetMessageKind): Item => ({ message: { role, content }, kind });

export const envelope = (summary: string, size: number, fill = 'x'): string => JSON.stringify({ ok: true, summary, data: { text: fill.repeat(size) } });

/** A complete tool group of the loop: one assistant message with its calls, then one result per call. */
export function group(
  calls: { id: string; name: string; args: Record<string, unknown>; result: string }[],
  options: { kind?: BudgetMessageKind; thinking?: string } = {},
): Item[] {
  const kind = options.kind ?? 'loop';
  const assistant: BudgetMessage = { role: 'assistant', content: '', toolCalls: calls.map((c) => ({ id: c.id, name: c.name, arguments: c.args })) };
  if (options.thinking !== undefined) assistant.thinking = { text: options.thinking, signature: 'sig' };
  return [
    { message: assistant, kind },
    ...calls.map((c) => ({ message: { role: 'tool' as const, content: c.result, toolCallId: c.id, toolName: c.name }, kind })),
  ];
}

export const single = (id: string, result: string, options: { name?: string; args?: Record<string, unknown>; thinking?: string } = {}): Item[] =>
  group(
    [{ id, name: options.name ?? 'search', args: options.args ?? { q: id }, result }],
    options.thinking !== undefined ? { thinking: options.thinking } : {},
  );

export interface RequestOptions {
  limit?: number;
  ledger?: BudgetLedger;
  locale?: Locale;
  mode?: BudgetMode;
  responseSchema?: Record<string, unknown>;
  estimator?: (text: string) => number;
}

const RESERVE = 100;

export function request(items: readonly Item[], options: RequestOptions = {}): BudgetRequest<BudgetMessage> {
  return {
    messages: items.map((i) => i.message),
    kinds: items.map((i) => i.kind),
    limits: { contextWindow: (options.limit ?? 1_000_000) + RESERVE, responseReserve: RESERVE },
    estimator: options.estimator ?? perCodePoint,
    ledger: options.ledger ?? EMPTY_LEDGER,
    locale: options.locale ?? 'en',
    ...(options.mode ? { mode: options.mode } : {}),
    ...(options.responseSchema ? { responseSchema: options.responseSchema } : {}),
  };
}

/** The smallest input limit whose 70 % stop is at least `estimate`. */
export const limitWithTarget = (estimate: number): number => Math.ceil((estimate * 10) / 7);
