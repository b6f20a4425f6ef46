import { type Kysely, sql } from 'kysely';
import type { Database } from '../events';
import { estimateCostUsd, type PriceTable, roundUsd } from '../providers';
import { USAGE_PROJECTION } from './usage-projection';

/** A tenant's (or the deployment's) usage over a range of days: what a spend budget is checked against. */
export type UsageTotals = { calls: number; inputTokens: number; cachedInputTokens: number; outputTokens: number; estCostUsd: number };

/** What a report groups its rows by; `tenant` only for the operator (every tenant's usage). */
export const USAGE_GROUPS = ['day', 'session', 'model', 'runtime', 'tenant'] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];

/** One row of a report: its group's key (a day `YYYY-MM-DD`, a session id, a model, a runtime, a tenant id) and its sums. */
export type UsageRow = UsageTotals & {
  /** Null only for `session`: the calls of no session (world generation jobs). */
  key: string | null;
};

export interface UsageReport {
  /** The first and the last UTC day counted (`YYYY-MM-DD`, inclusive): usage is metered per day. */
  from: string;
  to: string;
  groupBy: UsageGroup;
  /** Ordered by key (a null key last). */
  rows: UsageRow[];
  totals: UsageTotals;
  /** Models of the range without a price: their calls count $0 in `estCostUsd` (their tokens count). */
  unpricedModels: string[];
  /**
   * Events the `usage` projection skipped (quarantined) and no replay has applied since: the figures
   * miss their calls until one does (an operator is alerted). Scoped like the report.
   */
  quarantinedEvents: number;
}

/** A range of time: the UTC days from `from`'s through `to`'s, both included. */
export interface UsageRange {
  from: Date;
  to: Date;
}

/** `YYYY-MM-DD` of a time, in UTC. */
export const utcDay = (at: Date): string => at.toISOString().slice(0, 10);

const GROUP_COLUMN: Record<UsageGroup, string> = {
  day: 'day::text',
  session: 'session_id',
  model: 'model',
  runtime: 'runtime',
  tenant: 'tenant_id',
};

interface ModelSums {
  key: string | null;
  model: string;
  calls: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
}

const zero = (): UsageTotals => ({ calls: 0, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, estCostUsd: 0 });

/**
 * Reads the `usage` projection (`usage_daily`): sums over UTC days, priced when read. The est. cost
 * is each model's tokens at the list prices in force (`PriceTable`: built in, `llm.toml` `[prices]`
 * over them; cached input at the cached price), the same estimate as the inspector's; a model
 * without a price counts $0. Tenant-scoped unless the operator asks for every tenant.
 */
export class UsageStore {
  constructor(private readonly deps: { db: Kysely<Database>; prices: PriceTable }) {}

  /** The tenant's sums over the range: one indexed read (its rows of those days, grouped by model). */
  async totals(request: { tenantId: string } & UsageRange): Promise<UsageTotals> {
    const sums = await this.read({ tenantId: request.tenantId, from: utcDay(request.from), to: utcDay(request.to), groupBy: null });
    return this.fold(sums).totals;
  }

  /** A report over the range grouped by `groupBy`: one tenant's (`tenantId`), or every tenant's (the operator: `tenantId` null). */
  async report(request: { tenantId: string | null; groupBy: UsageGroup } & UsageRange): Promise<UsageReport> {
    const from = utcDay(request.from);
    const to = utcDay(request.to);
    const [sums, quarantinedEvents] = await Promise.all([
      this.read({ tenantId: request.tenantId, from, to, groupBy: request.groupBy }),
      this.quarantined(request.tenantId),
    ]);
    const { rows, totals, unpriced } = this.fold(sums);
    return { from, to, groupBy: request.groupBy, rows, totals, unpricedModels: unpriced, quarantinedEvents };
  }

  private async read(request: { tenantId: string | null; from: string; to: string; groupBy: UsageGroup | null }): Promise<ModelSums[]> {
    const key = request.groupBy === null ? sql`null::text` : sql.raw(GROUP_COLUMN[request.groupBy]);
    const tenant = request.tenantId === null ? sql`` : sql`tenant_id = ${request.tenantId} and`;
    const { rows } = await sql<{ key: string | null; model: string; calls: string; input: string; cached: string; output: string }>`
      select ${key} as key, model, sum(calls) as calls, sum(input_tokens) as input, sum(cached_input_tokens) as cached, sum(output_tokens) as output
      from usage_daily
      where ${tenant} day between ${request.from}::date and ${request.to}::date
      group by 1, model`.execute(this.deps.db);
    return rows.map((r) => ({
      key: r.key,
      model: r.model,
      calls: Number(r.calls),
      inputTokens: Number(r.input),
      cachedInputTokens: Number(r.cached),
      outputTokens: Number(r.output),
    }));
  }

  /** Per key the sums over its models, each model's tokens priced; and the totals. */
  private fold(sums: readonly ModelSums[]): { rows: UsageRow[]; totals: UsageTotals; unpriced: string[] } {
    const byKey = new Map<string | null, UsageTotals>();
    const totals = zero();
    const unpriced = new Set<string>();
    for (const s of sums) {
      const price = this.deps.prices.priceOf(s.model);
      if (!price) unpriced.add(s.model);
      const cost = estimateCostUsd(s, price) ?? 0;
      const row = byKey.get(s.key) ?? zero();
      for (const t of [row, totals]) {
        t.calls += s.calls;
        t.inputTokens += s.inputTokens;
        t.cachedInputTokens += s.cachedInputTokens;
        t.outputTokens += s.outputTokens;
        t.estCostUsd = roundUsd(t.estCostUsd + cost);
      }
      byKey.set(s.key, row);
    }
    const rows = [...byKey].map(([key, t]) => ({ key, ...t }));
    rows.sort((a, b) => (a.key === b.key ? 0 : a.key === null ? 1 : b.key === null ? -1 : a.key < b.key ? -1 : 1));
    return { rows, totals, unpriced: [...unpriced].sort() };
  }

  private async quarantined(tenantId: string | null): Promise<number> {
    const row = await this.deps.db
      .selectFrom('projection_quarantine')
      .select(sql<string>`count(*)`.as('n'))
      .where('projection', '=', USAGE_PROJECTION)
      .where('resolved_at', 'is', null)
      .$if(tenantId !== null, (q) => q.where('tenant_id', '=', tenantId!))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}

/** Most UTC days one report or totals read covers (both ends included): a year. */
export const MAX_USAGE_RANGE_DAYS = 366;
