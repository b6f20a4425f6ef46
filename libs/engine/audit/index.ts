/** What a turn sent, rebuilt from the log: the requests of its model calls and the turn audit read from them. */
export { rebuildRequests } from './request-rebuild';
export type { RebuiltCall, SectionSource } from './request-rebuild';
export { TurnNotFoundError, auditTurn } from './turn-audit';
export type { TurnAudit } from './turn-audit';
