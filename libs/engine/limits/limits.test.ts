import { budgetPeriod, checkBudget } from './budget';
import { BudgetExhaustedError } from './errors';
import { MemoryRateLimiter, RedisRateLimiter } from './rate-limiter';

describe('budget periods (UTC)', () => {
  it('a day is a UTC day; a month a calendar month in UTC (the reset is the next one’s start)', () => {
    const at = new Date('2026-12-31T23:30:00-05:00'); // already 1 January in UTC
    expect(budgetPeriod('day', at)).toEqual({ from: new Date('2027-01-01T00:00:00Z'), to: new Date('2027-01-02T00:00:00Z') });
    expect(budgetPeriod('month', new Date('2026-02-28T12:00:00Z'))).toEqual({ from: new Date('2026-02-01T00:00:00Z'), to: new Date('2026-03-01T00:00:00Z') });
  });

  it('at the budget (tokens = input + output, or the estimated cost) is exhausted; under it passes', async () => {
    const usage = { totals: () => Promise.resolve({ calls: 3, inputTokens: 600, cachedInputTokens: 500, outputTokens: 400, estCostUsd: 0.5 }) };
    const now = new Date('2026-12-05T10:00:00Z');
    await expect(checkBudget({ tenantId: 't', budget: { period: 'day', maxTokens: 1001 }, usage, now })).resolves.toBeUndefined();
    const tokens = checkBudget({ tenantId: 't', budget: { period: 'day', maxTokens: 1000 }, usage, now });
    await expect(tokens).rejects.toBeInstanceOf(BudgetExhaustedError);
    await expect(tokens).rejects.toMatchObject({
      code: 'BUDGET_EXHAUSTED',
      category: 'payment-required',
      details: { period: 'day', resetsAt: '2026-12-06T00:00:00.000Z', exhausted: 'maxTokens', limit: 1000, used: 1000 },
    });
    await expect(checkBudget({ tenantId: 't', budget: { period: 'month', maxUsd: 0.5 }, usage, now })).rejects.toMatchObject({
      details: { exhausted: 'maxUsd', resetsAt: '2027-01-01T00:00:00.000Z' },
    });
  });
});

describe('token buckets', () => {
  it('in memory: a burst, then refills at the rate', async () => {
    let now = 0;
    const limiter = new MemoryRateLimiter(() => now);
    const bucket = { tenantId: 'a', ratePerSecond: 2, burst: 3 };
    const taken = [];
    for (let i = 0; i < 4; i++) taken.push(await limiter.take(bucket));
    expect(taken.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
    ]);
    expect(taken[3]).toMatchObject({ limit: 3, retryAfterSeconds: 1, resetSeconds: 2, windowSeconds: 2 });
    expect((await limiter.take({ ...bucket, tenantId: 'b' })).allowed).toBe(true); // another tenant's bucket
    now = 500; // one token back
    expect((await limiter.take(bucket)).allowed).toBe(true);
    expect((await limiter.take(bucket)).allowed).toBe(false);
  });

  it('in memory, at once: the same bucket and the same answers as take', async () => {
    let now = 0;
    const limiter = new MemoryRateLimiter(() => now);
    const bucket = { tenantId: 'a', ratePerSecond: 2, burst: 3 };
    expect(limiter.takeAtOnce(bucket)).toMatchObject({ allowed: true, remaining: 2 });
    expect(await limiter.take(bucket)).toMatchObject({ allowed: true, remaining: 1 });
    expect(limiter.takeAtOnce(bucket)).toMatchObject({ allowed: true, remaining: 0 });
    expect(limiter.takeAtOnce(bucket)).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
    now = 500;
    expect(limiter.takeAtOnce(bucket)).toMatchObject({ allowed: true });
  });

  it('Redis unreachable: fails open with one warning per outage', async () => {
    const warnings: string[] = [];
    const limiter = new RedisRateLimiter({ redisUrl: 'redis://127.0.0.1:9', prefix: 'covel-test', logger: { warn: (m: string) => warnings.push(m) } });
    try {
      const bucket = { tenantId: 'a', ratePerSecond: 1000, burst: 10_000 };
      for (let i = 0; i < 3; i++) {
        expect(await limiter.take(bucket)).toMatchObject({ allowed: true });
        // a pass without Redis leases nothing: no request is answered at once from it once Redis is back
        expect(limiter.takeAtOnce(bucket)).toBeNull();
      }
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/rate limit not checked/);
    } finally {
      await limiter.close();
    }
  });
});
