import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { projectionSpec } from '../../test/support/projection-spec';
import { PriceTable } from '../providers';
import { usageProjection } from './usage-projection';
import { UsageStore, utcDay } from './usage-store';

/**
 * UsageStore over rows the projection wrote: scoped to the tenant asked (or every tenant for the
 * operator), one row per group, each model's tokens priced when read.
 */
const spec = projectionSpec({ async: usageProjection });
beforeAll(() => spec.start(), 120_000);
afterAll(() => spec.stop());

const prices = new PriceTable({ 'priced-model': { input: 2, cachedInput: 0.5, output: 8, asOf: '2026-12-01' } });
const call = (model: string, runtimeId: string, used: { inputTokens: number; cachedInputTokens: number; outputTokens: number }) => {
  const base = { executionId: 'e', turnId: 'u', callId: randomUUID(), pluginId: 'p', runtimeId };
  return [
    { type: 'llm.calling@1' as const, data: { ...base, attempt: 1, provider: 'openai-chat', model, body: '{}' } },
    { type: 'llm.responded@1' as const, data: { ...base, finishReason: 'stop', usage: used } },
  ];
};

describe('UsageStore', () => {
  const [a, b] = [`ta-${randomUUID()}`, `tb-${randomUUID()}`];
  const [sa1, sa2, sb] = [randomUUID(), randomUUID(), randomUUID()];
  const today = new Date();
  beforeAll(async () => {
    await spec.append(
      { tenant: a, stream: sa1, events: [...call('priced-model', 'story', { inputTokens: 1_000_000, cachedInputTokens: 500_000, outputTokens: 100_000 })] },
      { tenant: a, stream: sa2, events: [...call('no-price', 'tracker', { inputTokens: 10, cachedInputTokens: 0, outputTokens: 1 })] },
      { tenant: b, stream: sb, events: [...call('priced-model', 'story', { inputTokens: 7, cachedInputTokens: 0, outputTokens: 7 })] },
    );
  });

  it("a tenant's totals and report are its own; the cost prices each model's tokens (a model without a price counts $0 and is named)", async () => {
    const store = new UsageStore({ db: spec.db, prices });
    // 0.5M uncached × $2 + 0.5M cached × $0.5 + 0.1M output × $8 = 1 + 0.25 + 0.8
    expect(await store.totals({ tenantId: a, from: today, to: today })).toEqual({
      calls: 2,
      inputTokens: 1_000_010,
      cachedInputTokens: 500_000,
      outputTokens: 100_001,
      estCostUsd: 2.05,
    });
    const report = await store.report({ tenantId: a, from: today, to: today, groupBy: 'session' });
    expect(report).toMatchObject({ from: utcDay(today), to: utcDay(today), unpricedModels: ['no-price'], quarantinedEvents: 0 });
    expect(new Set(report.rows.map((r) => r.key))).toEqual(new Set([sa1, sa2]));
    const byRuntime = await store.report({ tenantId: a, from: today, to: today, groupBy: 'runtime' });
    expect(byRuntime.rows.map((r) => [r.key, r.calls, r.estCostUsd])).toEqual([
      ['p/story', 1, 2.05],
      ['p/tracker', 1, 0],
    ]);
    expect((await store.totals({ tenantId: b, from: today, to: today })).calls).toBe(1);
  });

  it('the operator sees every tenant, grouped by tenant; days outside the range count nothing', async () => {
    const store = new UsageStore({ db: spec.db, prices });
    const all = await store.report({ tenantId: null, from: today, to: today, groupBy: 'tenant' });
    expect(all.rows.filter((r) => r.key === a || r.key === b).map((r) => [r.key, r.calls])).toEqual([
      [a, 2],
      [b, 1],
    ]);
    const yesterday = new Date(Date.now() - 86_400_000);
    expect((await store.totals({ tenantId: a, from: yesterday, to: yesterday })).calls).toBe(0);
  });

  it("quarantinedEvents counts the tenant's unresolved skipped events of the usage projection only", async () => {
    const store = new UsageStore({ db: spec.db, prices });
    await sql`insert into projection_quarantine (projection, shard, global_position, transaction_id, event_type, tenant_id, stream_id, error_code, error, attempts)
      values ('usage', 0, 999999, '1'::xid8, 'llm.responded@1', ${b}, ${sb}, 'X', 'x', 5), ('prefix_reports', 0, 999999, '1'::xid8, 'llm.responded@1', ${b}, ${sb}, 'X', 'x', 5)`.execute(
      spec.db,
    );
    expect((await store.report({ tenantId: b, from: today, to: today, groupBy: 'day' })).quarantinedEvents).toBe(1);
    expect((await store.report({ tenantId: a, from: today, to: today, groupBy: 'day' })).quarantinedEvents).toBe(0);
  });
});
