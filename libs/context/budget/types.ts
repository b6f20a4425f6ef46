import type { Locale } from '../../plugins-sdk';

/**
 * Spec §5 "Budget": the token budget of one model call. `libs/context` is pure: the caller (the
 * engine) gives the request as provider-neutral messages with what each message is, and gets the
 * messages the call sends back, plus what the run's ledger gained. Stored records never change.
 */

/** Estimated tokens of a text: the spec's character estimate (`estimateTokens`) or a model's real tokenizer. */
export type Estimator = (text: string) => number;

/** The model's limits: input limit = contextWindow − responseReserve (the reserve also caps this call's output). */
export interface BudgetLimits {
  contextWindow: number;
  responseReserve: number;
}

/** A tool call as the budget sees it (structurally the providers' ToolCall). */
export interface BudgetToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** A message as the budget sees it: structurally the providers' ChatMessage (libs/context does not import providers). */
export interface BudgetMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** Counted at the spec's 1,500 tokens per image. */
  images?: readonly unknown[];
  toolCalls?: readonly BudgetToolCall[];
  thinking?: { text: string; signature?: string };
  /** Provider continuation (opaque here; kept with the newest group). */
  continuation?: unknown;
  toolCallId?: string;
  toolName?: string;
}

/**
 * What a message of the request is, for the trimming rules:
 * - `system-prompt`: the first message (never trimmed);
 * - `summary`: the `<compacted_history>` envelope (protected from history pruning; head/tail truncated last);
 * - `history`: committed messages of earlier turns, and other pre-turn conversation (pruned oldest first);
 * - `protected`: the current turn with the turn context before it (and the system message right before it);
 * - `loop`: what the agent loop's steps added (assistant replies with tool calls, tool results, nudges, retry hints);
 * - `other`: anything else (a message a PreLLMCall hook added): never trimmed.
 */
export type BudgetMessageKind = 'system-prompt' | 'summary' | 'history' | 'protected' | 'loop' | 'other';

/**
 * One call and its result inside a tool group, identified by content, not position: call id, tool
 * name, arguments (canonical JSON) and the result's content.
 */
export interface LedgerCall {
  id: string;
  name: string;
  arguments: string;
  result: string;
}

/** A decision the run made once and replays on every later request of the run (spec §5 "per-run ledger"). */
export type LedgerEntry = { kind: 'elide'; calls: LedgerCall[] } | { kind: 'collapse'; calls: LedgerCall[] };

/** The per-run ledger: only grows; a resumed runtime starts a new one. */
export interface BudgetLedger {
  entries: readonly LedgerEntry[];
}

export const EMPTY_LEDGER: BudgetLedger = { entries: [] };

/** `normal`: an ordinary step; `finalizer`: a finalizer request (same trigger, same 70 % stop); `emergency`: the newest groups are eligible too. */
export type BudgetMode = 'normal' | 'finalizer' | 'emergency';

export interface BudgetRequest<M extends BudgetMessage> {
  messages: readonly M[];
  /** Parallel to `messages`. */
  kinds: readonly BudgetMessageKind[];
  /** Tool definitions sent with the call (counted as their JSON). */
  tools?: readonly { name: string; description: string; parameters: Record<string, unknown> }[];
  /** The response schema: counted twice (the bridge writes it into the system prompt; Responses and Gemini send it natively too). */
  responseSchema?: Record<string, unknown>;
  /**
   * `estimateFixed` of `tools` and `responseSchema` with `estimator`, when the caller has it already
   * (a request checked more than once); absent: counted here.
   */
  fixedTokens?: number;
  limits: BudgetLimits;
  estimator: Estimator;
  /** The run's ledger so far (replayed first). */
  ledger: BudgetLedger;
  locale: Locale;
  mode?: BudgetMode;
}

export interface BudgetStats {
  inputLimit: number;
  /** Estimated input tokens before anything was applied (ledger replay included in `after`). */
  before: number;
  after: number;
  /**
   * Tool results elided, groups collapsed (ledger replays included), history messages pruned,
   * messages head/tail truncated in this request.
   */
  elided: number;
  collapsed: number;
  pruned: number;
  truncated: number;
}

export type BudgetOutcome<M extends BudgetMessage> =
  /** The request to send (under the input limit). `ledger`: the run's ledger with what this request added. */
  | { kind: 'fits'; messages: M[]; kinds: BudgetMessageKind[]; ledger: BudgetLedger; stats: BudgetStats }
  /** Still over after every step: nothing is sent; `text` is the overflow text (the runtime's failure unless a finalizer rescues it). */
  | { kind: 'overflow'; text: string; messages: M[]; kinds: BudgetMessageKind[]; ledger: BudgetLedger; stats: BudgetStats };
