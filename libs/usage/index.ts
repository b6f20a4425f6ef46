export { usageProjection, USAGE_PROJECTION } from './usage-projection';
export { planUsage, USAGE_EVENT_TYPES, compactionRuntime, WORLD_GENERATION_RUNTIME } from './usage-plan';
export type { UsageIncrement, UsagePlan, KnownCall } from './usage-plan';
export { UsageStore, USAGE_GROUPS, utcDay, MAX_USAGE_RANGE_DAYS } from './usage-store';
export type { UsageTotals, UsageGroup, UsageRow, UsageReport, UsageRange } from './usage-store';
