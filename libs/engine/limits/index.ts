export { TenantLimitsService, LIMITS_CACHE_MS } from './tenant-limits-service';
export type { LimitDefaults, TenantLimitsServiceOptions, TenantLimitsView } from './tenant-limits-service';
export { MemoryRateLimiter, RedisRateLimiter } from './rate-limiter';
export type { BucketSpec, RateDecision, RateLimiter } from './rate-decision';
export { budgetPeriod, checkBudget } from './budget';
export type { BudgetPeriod, UsageTotals, UsageTotalsReader } from './budget';
export { BudgetExhaustedError, RateLimitedError } from './errors';
