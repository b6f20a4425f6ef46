import { TokenLeases } from './token-leases';

describe('token leases (a Redis bucket’s tokens spent in this process)', () => {
  const bucket = { tenantId: 't', ratePerSecond: 10, burst: 5000 };

  it('a take of several tokens answers the next requests without Redis, the headers counting down', () => {
    let now = 0;
    const leases = new TokenLeases({ lifetimeMs: 1000, now: () => now });
    expect(leases.take(bucket)).toBeNull(); // none yet: ask Redis
    // Redis took 3 (one for this request), 4000 left in the bucket
    expect(leases.taken(bucket, 3, 4000)).toMatchObject({ allowed: true, remaining: 4002, limit: 5000 });
    expect(leases.take(bucket)).toMatchObject({ allowed: true, remaining: 4001 });
    now = 100; // one token refilled in the bucket meanwhile
    expect(leases.take(bucket)).toMatchObject({ allowed: true, remaining: 4001 });
    expect(leases.take(bucket)).toBeNull(); // spent
    expect(leases.giveBack(bucket)).toBe(0);
  });

  it('an expired lease is not spent: what it did not use is given back once, with the next take', () => {
    let now = 0;
    const leases = new TokenLeases({ lifetimeMs: 1000, now: () => now });
    leases.taken(bucket, 5, 4000);
    expect(leases.take(bucket)).not.toBeNull();
    now = 1000;
    expect(leases.take(bucket)).toBeNull();
    expect(leases.giveBack(bucket)).toBe(3);
    expect(leases.giveBack(bucket)).toBe(0); // counted once, never twice
  });

  it('a lease is its own tenant’s and its bucket spec’s: another tenant, or limits changed, asks Redis', () => {
    const leases = new TokenLeases({ lifetimeMs: 1000, now: () => 0 });
    leases.taken(bucket, 5, 4000);
    expect(leases.take({ ...bucket, tenantId: 'other' })).toBeNull();
    const changed = { ...bucket, burst: 10 };
    expect(leases.take(changed)).toBeNull();
    expect(leases.giveBack(changed)).toBe(4); // the same bucket (its key is the tenant's): the tokens go back
    expect(leases.take(bucket)).toBeNull();
  });

  it('refused by Redis: not allowed, no lease; one token taken: no lease either', () => {
    const leases = new TokenLeases({ lifetimeMs: 1000, now: () => 0 });
    expect(leases.taken(bucket, 0, 0.5)).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
    expect(leases.taken(bucket, 1, 10)).toMatchObject({ allowed: true, remaining: 10 });
    expect(leases.take(bucket)).toBeNull();
  });

  it('a take that ran meanwhile keeps the lease’s tokens with its own', () => {
    const leases = new TokenLeases({ lifetimeMs: 1000, now: () => 0 });
    leases.taken(bucket, 3, 4000);
    leases.taken(bucket, 3, 3990);
    let spent = 0;
    while (leases.take(bucket)) spent++;
    expect(spent).toBe(4);
  });
});
