import { EngineError, TooManyRequestsError } from '../../errors';

/** The tenant's request bucket is empty: 429 `RATE_LIMITED`, `Retry-After` = when the next token is in. */
export class RateLimitedError extends TooManyRequestsError {
  constructor(retryAfterSeconds: number) {
    super('RATE_LIMITED', `request rate limit reached: retry after ${retryAfterSeconds} s`, retryAfterSeconds);
  }
}

/**
 * The tenant's spend budget for the period is used up: 402 `BUDGET_EXHAUSTED`, checked before a new
 * input is appended (nothing is recorded). 402 rather than 429: waiting a few seconds does not help,
 * the budget comes back at `resetsAt` (the period's end) or when an operator raises it.
 */
export class BudgetExhaustedError extends EngineError {
  readonly code = 'BUDGET_EXHAUSTED';
  readonly category = 'payment-required';
  override readonly details: Readonly<Record<string, unknown>>;
  constructor(details: { period: 'day' | 'month'; resetsAt: string; exhausted: 'maxTokens' | 'maxUsd'; limit: number; used: number }) {
    super(`the ${details.period}'s spend budget is used up (${details.exhausted} ${details.limit}, used ${details.used}); it resets at ${details.resetsAt}`);
    this.details = details;
  }
}
