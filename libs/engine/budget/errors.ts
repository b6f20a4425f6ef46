import type { BudgetStats } from '../../context';
import { EngineError } from '../../errors';

/** Spec §5 "Budget checks happen in three places": where a check ran. */
export type BudgetCheckPoint = 'assembly' | 'post-context-assembly' | 'request';

/**
 * Spec §5 "Still over the limit": the request is over its model's input limit after every trimming
 * step; nothing was sent. The agent loop turns it into the runtime's `context-overflow` failure
 * (unless a finalizer rescues it). `text`: the budget's overflow text.
 */
export class ContextOverflowError extends EngineError {
  readonly code = 'CONTEXT_OVERFLOW';
  readonly category = 'invalid';
  constructor(
    readonly text: string,
    readonly stats: BudgetStats,
    /** Where the check stopped it: the assembled context, the context after the PostContextAssembly hooks, or the request after the PreLLMCall hooks. */
    readonly at: BudgetCheckPoint,
  ) {
    super(text);
  }
}
