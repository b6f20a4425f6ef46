export * from './event-types';
export * from './errors';
export type { Database } from './schema';
export { EventStore, validateEvent } from './event-store';
export type { AppendRequest, AppendResult } from './event-store';
export { openDatabase, migrateToLatest, MigrationError } from './database';
export type { DatabaseConfig, OpenDatabase } from './database';
export { prepareSchema, migrateAsOwner } from './schema-setup';
export type { SchemaSetupResult } from './schema-setup';
export {
  schemaStatus,
  connectionRole,
  missingAppPrivileges,
  grantAppRole,
  SchemaNotCurrentError,
  AppRolePrivilegesError,
  AppRoleError,
  APP_ROLE_PATTERN,
} from './schema-access';
export type { SchemaStatus, ConnectionRole, MissingPrivilege } from './schema-access';
export { ProjectionRunner, defaultProjections } from './projections/projection-runner';
export type { Projection } from './projections/projection';
export { TenantStore, hashApiKey, newApiKey } from './tenants';
export type { Tenant } from './tenants';
export { ReadModels } from './read-models';
export type { ExecutionView, TurnMessageView, LlmCallView, SummaryView, RecordedCallView, PrefixReportView } from './read-models';
