export { prefixUnits } from './prefix-units';
export type { PrefixUnit } from './prefix-units';
export { comparePrefix } from './prefix-compare';
export type { FirstDifference, PrefixComparison, RecordedRequest } from './prefix-compare';
export { prefixReport, formatPrefixTables } from './prefix-report';
export type { PrefixRow, RecordedCall } from './prefix-report';
export { branchPrefixReport, formatBranchPrefixTable, readBranchPoint } from './branch-prefix';
export type { BranchPoint, BranchPrefixRow } from './branch-prefix';
export { prefixReportsProjection } from './prefix-reports-projection';
export { insertSql as prefixReportsInsertQuery } from './prefix-reports-write';
export { prefixStateQuery } from './prefix-state-query';
export type { NewPrefixReport } from './prefix-reports-plan';
export { sessionTurns, inspectTurnCalls, hasTurn } from './turn-inspection';
export type {
  SessionTurnView,
  SessionTurnAlternativeView,
  TurnRunStatus,
  CallInspectionView,
  RequestUnitView,
  CacheBoundaryView,
  UnitSpanView,
  PrefixComparisonView,
  ToolActivityView,
} from './turn-inspection';
export { withCallCosts, withTurnCosts, turnCosts, usageCost } from './turn-costs';
export { withTurnReverts } from './turn-reverts';
export type { RevertMarked, TurnRevertView } from './turn-reverts';
export type { CallCost, CallUsage, CostedCallView, CostedTurnView } from './turn-costs';
