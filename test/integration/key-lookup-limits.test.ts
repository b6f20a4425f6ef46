import { MemoryRateLimiter, TenantLimitsService } from '../../libs/engine';
import {
  EventStore,
  migrateToLatest,
  openDatabase,
  type OpenDatabase,
  pgCounts,
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

  /** One API process's pair, as `createEngine` makes them. */
  function apiProcess() {
    const limits = new TenantLimitsService({
      store: new EventStore(open.db, { inline: [tenantLimitsProjection] }),
      reads: new TenantLimitsReads(open.db),
      defaults: { requestsPerSecond: 0, burst: 1 },
      rate: new MemoryRateLimiter(),
      usage: null,
      cacheMs: 60_000,
    });
    const tenants = new TenantStore(open.db, { cacheMs: 60_000, onLimitsRead: (tenantId, recorded) => limits.remember(tenantId, recorded) });
    return { limits, tenants };
  }

  it('one statement for the key and the limits; the rate limit then reads nothing; another tenant has its own', async () => {
    const setup = apiProcess();
    const limited = await setup.tenants.create('limited');
    const free = await setup.tenants.create('free');
    await setup.limits.change({
      tenantId: limited.tenant.id,
      limits: { requestsPerSecond: 5, burst: 7, budget: { maxUsd: 3, period: 'month' } },
      by: 'operator',
    });

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
