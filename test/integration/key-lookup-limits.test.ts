import { MemoryRateLimiter, TenantLimitsService, type UsageTotalsReader } from '../../libs/engine';
import {
  EventStore,
  migrateToLatest,
  openDatabase,
  type OpenDatabase,
  pgCounts,
  type TenantLimits,
  TenantLimitsReads,
  tenantLimitsProjection,
  TenantStore,
} from '../../libs/events';
import { createTestDatabase } from '../support/stack';

/** Statements this process sent since `before`: all of them, and the reads of a tenant's limits alone (`TenantLimitsReads.current`). */
function since(before: ReturnType<typeof pgCounts>): { all: number; limits: number } {
  let all = 0;
  let limits = 0;
  for (const [label, n] of pgCounts().statements) {
    const d = n - (before.statements.get(label) ?? 0);
    all += d;
    if (label.startsWith('select "limits", "changed_by", "updated_at" from "tenant_l')) limits += d; // a label is the statement's first 60 code points
  }
  return { all, limits };
}

/**
 * PostgreSQL: the key lookup of a request (TenantStore.authenticate, as the engine wires it) brings
 * its tenant's limits in the same statement, so the request's rate limit and budget read nothing of
 * their own (issue 33); each tenant's limits are its own.
 */
describe('a key lookup brings its tenant’s limits (PostgreSQL)', () => {
  let database: { name: string; url: string; drop(): Promise<void> };
  let open: OpenDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
    open = await openDatabase({ kind: 'postgres', url: database.url });
    await migrateToLatest(open.db);
  }, 60_000);

  afterAll(async () => {
    await open?.close();
    await database?.drop();
  });

  /** One API process's pair, as `createEngine` makes them (`usage`: budgets enforced against it). */
  function apiProcess(usage: UsageTotalsReader | null = null) {
    const limits = new TenantLimitsService({
      store: new EventStore(open.db, { inline: [tenantLimitsProjection] }),
      reads: new TenantLimitsReads(open.db),
      defaults: { requestsPerSecond: 0, burst: 1 },
      rate: new MemoryRateLimiter(),
      usage,
      cacheMs: 60_000,
    });
    const tenants = new TenantStore(open.db, { cacheMs: 60_000, onLimitsRead: (tenantId, recorded) => limits.remember(tenantId, recorded) });
    return { limits, tenants };
  }

  /** Two tenants made by another process: `limited` with `limits` set by the operator, `free` with none. */
  async function limitedAndFree(suffix: string, limits: TenantLimits) {
    const setup = apiProcess();
    const limited = await setup.tenants.create(`limited${suffix}`);
    const free = await setup.tenants.create(`free${suffix}`);
    await setup.limits.change({ tenantId: limited.tenant.id, limits, by: 'operator' });
    return { limited, free };
  }

  it('one statement for the key and the limits; the rate limit then reads nothing; another tenant has its own', async () => {
    const { limited, free } = await limitedAndFree('', { requestsPerSecond: 5, burst: 7, budget: { maxUsd: 3, period: 'month' } });

    const { limits, tenants } = apiProcess();
    await tenants.authenticate(free.apiKey); // the pepper read once, before counting
    let before = pgCounts();
    expect((await tenants.authenticate(limited.apiKey))?.tenant.id).toBe(limited.tenant.id);
    expect(since(before)).toEqual({ all: 2, limits: 0 }); // the lookup, and its key's last_used_at (once a minute)
    before = pgCounts();
    expect(await limits.takeRequest(limited.tenant.id)).toMatchObject({ allowed: true, limit: 7, remaining: 6 });
    expect((await limits.view(limited.tenant.id)).effective.budget).toEqual({ maxUsd: 3, period: 'month' });
    expect(since(before).limits).toBe(1); // `view` (the admin route) always reads; takeRequest read nothing
    before = pgCounts();
    expect(await limits.takeRequest(free.tenant.id)).toBeNull(); // no limits recorded: the defaults, no rate limit
    expect(await limits.maxInFlight(free.tenant.id)).toBeNull();
    expect(since(before).all).toBe(0);
  }, 30_000);

  it('a request of a key found lately is answered at once (no promise, no statement): its caller, its rate, whether a budget is to be checked', async () => {
    const { limited, free } = await limitedAndFree(' at once', { requestsPerSecond: 5, burst: 2, budget: { maxTokens: 9, period: 'day' } });
    const usage = { totals: () => Promise.resolve({ calls: 0, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, estCostUsd: 0 }) };
    const { limits, tenants } = apiProcess(usage);
    // nothing in memory yet: each must be asked the long way
    expect(tenants.remembered(limited.apiKey)).toBeUndefined();
    expect(limits.takeRequestAtOnce(limited.tenant.id)).toBeUndefined();
    expect(limits.noBudgetAtOnce(limited.tenant.id)).toBe(false);
    expect(limits.noBudgetAtOnce(free.tenant.id)).toBe(false);
    await tenants.authenticate(limited.apiKey);
    await tenants.authenticate(free.apiKey);
    const before = pgCounts();
    expect(tenants.remembered(limited.apiKey)).toEqual({
      tenant: { id: limited.tenant.id, name: 'limited at once' },
      key: expect.objectContaining({ id: expect.any(String) }),
    });
    expect(tenants.remembered(free.apiKey)?.tenant.id).toBe(free.tenant.id);
    expect(tenants.remembered('not-a-key')).toBeUndefined();
    // the limited tenant's bucket (2), at once, then the long way: one bucket
    expect(limits.takeRequestAtOnce(limited.tenant.id)).toMatchObject({ allowed: true, limit: 2, remaining: 1 });
    expect(await limits.takeRequest(limited.tenant.id)).toMatchObject({ allowed: true, remaining: 0 });
    expect(limits.takeRequestAtOnce(limited.tenant.id)).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
    expect(limits.takeRequestAtOnce(free.tenant.id)).toBeNull(); // no rate in force
    expect(limits.noBudgetAtOnce(limited.tenant.id)).toBe(false); // a budget: checkBudget reads the usage
    expect(limits.noBudgetAtOnce(free.tenant.id)).toBe(true);
    expect(since(before).all).toBe(0);
  }, 30_000);

  it('without the hook, the limits are read by the request itself', async () => {
    const limits = new TenantLimitsService({
      store: new EventStore(open.db, { inline: [tenantLimitsProjection] }),
      reads: new TenantLimitsReads(open.db),
      defaults: { requestsPerSecond: 0, burst: 1 },
      rate: new MemoryRateLimiter(),
      usage: null,
      cacheMs: 60_000,
    });
    const tenants = new TenantStore(open.db, { cacheMs: 60_000 });
    const { tenant, apiKey } = await tenants.create('plain');
    await tenants.authenticate(apiKey);
    const before = pgCounts();
    expect(await limits.takeRequest(tenant.id)).toBeNull();
    expect(since(before).limits).toBe(1);
  }, 30_000);
});
