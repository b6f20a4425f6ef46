import { ConcurrencyError, type EventStore, type RecordedTenantLimits, type TenantLimits, type TenantLimitsReads, tenantStreamId } from '../../events';
import { BoundedMemo } from '../../memo';
import { NotFoundError } from '../../errors';
import { checkBudget, type UsageTotalsReader } from './budget';
import type { RateDecision, RateLimiter } from './rate-limiter';
import type { TenantCaps } from '../queue';

/** How long a process answers a tenant's limits from memory: a change is in force everywhere within this. */
export const LIMITS_CACHE_MS = 500;

/** Appends of a change retried when another append to the tenant's stream came first (a key's event). */
const CHANGE_ATTEMPTS = 5;

/** The deployment's defaults (config): what a tenant's absent fields mean. */
export interface LimitDefaults {
  /** Requests per second a tenant's bucket refills; 0: no rate limit by default. */
  requestsPerSecond: number;
  burst: number;
}

/** A tenant's limits as the API answers them: what is recorded, and what is in force with the defaults. */
export interface TenantLimitsView {
  tenantId: string;
  /** What the operator set (absent fields: the defaults). */
  limits: TenantLimits;
  /** In force: `requestsPerSecond` 0 = no rate limit; `maxInFlight` null = the queue's default; `budget` null = none. */
  effective: { requestsPerSecond: number; burst: number; maxInFlight: number | null; budget: NonNullable<TenantLimits['budget']> | null };
  changedBy: string | null;
  updatedAt: string | null;
}

export interface TenantLimitsServiceOptions {
  store: EventStore;
  reads: TenantLimitsReads;
  defaults: LimitDefaults;
  rate: RateLimiter;
  /** The usage totals the budget is checked against; null: budgets are not enforced (nothing to read). */
  usage: UsageTotalsReader | null;
  cacheMs?: number;
}

/**
 * Tenant limits as tenant settings (issue 32 item 2): recorded as `tenant.limits-changed@1` in the
 * tenant's stream, read from `tenant_limits` and remembered for `LIMITS_CACHE_MS` per process (so a
 * change is in force on every API process within that, no restart). It answers the request rate
 * (token buckets), the spend budget (before an input is appended) and the cap on executions in
 * flight (`TenantCaps`, for the queue's fair admission).
 */
export class TenantLimitsService implements TenantCaps {
  private readonly cache: BoundedMemo<string, RecordedTenantLimits | null>;

  constructor(private readonly options: TenantLimitsServiceOptions) {
    this.cache = new BoundedMemo({ ttlMs: options.cacheMs ?? LIMITS_CACHE_MS, maxEntries: 10_000 });
  }

  /** The tenant's view; 404 `TENANT_NOT_FOUND` for an unknown tenant. */
  async view(tenantId: string): Promise<TenantLimitsView> {
    const recorded = await this.options.reads.current(tenantId);
    if (!recorded && !(await this.options.reads.tenantExists(tenantId))) throw tenantNotFound(tenantId);
    return this.viewOf(tenantId, recorded);
  }

  /** Replaces the tenant's limits (the whole object), recorded with `by`; 404 for an unknown tenant. */
  async change(request: { tenantId: string; limits: TenantLimits; by: string }): Promise<TenantLimitsView> {
    const { tenantId, limits, by } = request;
    if (!(await this.options.reads.tenantExists(tenantId))) throw tenantNotFound(tenantId);
    const streamId = tenantStreamId(tenantId);
    for (let attempt = 1; ; attempt++) {
      try {
        const expectedVersion = await this.options.store.streamVersion(streamId);
        await this.options.store.append({ tenantId, streamId, expectedVersion, events: [{ type: 'tenant.limits-changed@1', data: { tenantId, limits, by } }] });
        break;
      } catch (error) {
        if (!(error instanceof ConcurrencyError) || attempt >= CHANGE_ATTEMPTS) throw error;
      }
    }
    this.cache.delete(tenantId);
    return this.view(tenantId);
  }

  /** One request of the tenant taken from its bucket; null when no rate limit is in force for it. */
  async takeRequest(tenantId: string): Promise<RateDecision | null> {
    const { requestsPerSecond, burst } = this.effective(await this.recorded(tenantId));
    if (requestsPerSecond <= 0) return null;
    return this.options.rate.take({ tenantId, ratePerSecond: requestsPerSecond, burst });
  }

  /**
   * As `takeRequest`, answered at once without a promise when it can be (issue 33: CPU per request):
   * the tenant's limits in memory and either no rate in force for it (null) or a token this process
   * holds (`RateLimiter.takeAtOnce`). undefined: ask `takeRequest`.
   */
  takeRequestAtOnce(tenantId: string): RateDecision | null | undefined {
    const recorded = this.cache.get(tenantId);
    if (recorded === undefined) return undefined;
    const { requestsPerSecond, burst } = this.effective(recorded);
    if (requestsPerSecond <= 0) return null;
    return this.options.rate.takeAtOnce({ tenantId, ratePerSecond: requestsPerSecond, burst }) ?? undefined;
  }

  /**
   * Whether `checkBudget` is known to pass at once (issue 33: CPU per request): the tenant's limits in
   * memory set no budget, or budgets are not enforced. false: ask `checkBudget`.
   */
  noBudgetAtOnce(tenantId: string): boolean {
    if (!this.options.usage) return true;
    const recorded = this.cache.get(tenantId);
    return recorded !== undefined && this.effective(recorded).budget === null;
  }

  /** Throws `BudgetExhaustedError` (402) when the tenant's budget for the current period is used up. */
  async checkBudget(tenantId: string, now?: Date): Promise<void> {
    const { budget } = this.effective(await this.recorded(tenantId));
    if (!budget || !this.options.usage) return;
    await checkBudget({ tenantId, budget, usage: this.options.usage, ...(now ? { now } : {}) });
  }

  async maxInFlight(tenantId: string): Promise<number | null> {
    return (await this.recorded(tenantId))?.limits.maxInFlight ?? null;
  }

  /** What is recorded for the tenant, from memory for up to `cacheMs`. */
  async recorded(tenantId: string): Promise<RecordedTenantLimits | null> {
    const cached = this.cache.get(tenantId);
    if (cached !== undefined) return cached;
    const recorded = await this.options.reads.current(tenantId);
    this.cache.set(tenantId, recorded);
    return recorded;
  }

  /**
   * The tenant's limits as just read by another statement (the key lookup's, `TenantStoreOptions.onLimitsRead`):
   * remembered as `recorded` would remember its own read.
   */
  remember(tenantId: string, recorded: RecordedTenantLimits | null): void {
    this.cache.set(tenantId, recorded);
  }

  close(): Promise<void> {
    return this.options.rate.close();
  }

  private effective(recorded: RecordedTenantLimits | null): TenantLimitsView['effective'] {
    const limits = recorded?.limits ?? {};
    const { defaults } = this.options;
    return {
      requestsPerSecond: limits.requestsPerSecond ?? defaults.requestsPerSecond,
      burst: limits.burst ?? Math.max(defaults.burst, 1),
      maxInFlight: limits.maxInFlight ?? null,
      budget: limits.budget ?? null,
    };
  }

  private viewOf(tenantId: string, recorded: RecordedTenantLimits | null): TenantLimitsView {
    return {
      tenantId,
      limits: recorded?.limits ?? {},
      effective: this.effective(recorded),
      changedBy: recorded?.changedBy ?? null,
      updatedAt: recorded?.updatedAt.toISOString() ?? null,
    };
  }
}

const tenantNotFound = (tenantId: string) => new NotFoundError('TENANT_NOT_FOUND', `tenant ${tenantId} not found`);
