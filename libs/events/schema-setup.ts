import type { DatabaseConfig, OpenDatabase } from './database';
import { migrateToLatest, openDatabase } from './database';
import {
  AppRolePrivilegesError,
  type ConnectionRole,
  connectionRole,
  grantAppRole,
  missingAppPrivileges,
  SchemaNotCurrentError,
  schemaStatus,
} from './schema-access';

export interface SchemaSetupResult {
  /** Migrations applied now. */
  applied: string[];
  /** The app role granted its privileges now, if any. */
  granted: string | null;
  /** Things the operator should fix (e.g. the app connects as the owner). */
  warnings: string[];
}

/**
 * Migrates as the owner and grants the app role (when `appRole` is set): what `npm run migrate`
 * does, and what start-up does with a migration URL. Uses `migrationUrl`, else the app URL.
 */
export async function migrateAsOwner(config: Extract<DatabaseConfig, { kind: 'postgres' }>): Promise<{ applied: string[]; granted: string | null }> {
  const owner = await openDatabase({ kind: 'postgres', url: config.migrationUrl ?? config.url, poolSize: 1 });
  try {
    const applied = await migrateToLatest(owner.db);
    if (config.appRole) await grantAppRole(owner.db, config.appRole);
    return { applied, granted: config.appRole ?? null };
  } finally {
    await owner.close();
  }
}

/** The single-URL setup: this role owns the event log, or there is none yet and it may create it. */
function ownsSchema(role: ConnectionRole): boolean {
  return role.ownsEventLog === true || (role.ownsEventLog === null && role.mayCreate);
}

/**
 * Makes the schema ready for this process, or fails clearly. PGlite (one user): migrates. PostgreSQL:
 * with a migration URL, migrates (and grants) through it; without one, migrates through the app URL
 * only if that role owns the event log (or there is none yet and it may create tables) (the single-URL setup: works, with a warning), otherwise checks
 * that the schema is current and the role has its privileges, and fails with what to run if not.
 */
export async function prepareSchema(database: OpenDatabase, config: DatabaseConfig): Promise<SchemaSetupResult> {
  if (config.kind === 'pglite') return { applied: await migrateToLatest(database.db), granted: null, warnings: [] };
  let applied: string[] = [];
  let granted: string | null = null;
  if (config.migrationUrl) {
    ({ applied, granted } = await migrateAsOwner(config));
  } else if (ownsSchema(await connectionRole(database.db))) {
    applied = await migrateToLatest(database.db);
    if (config.appRole) await grantAppRole(database.db, config.appRole);
    granted = config.appRole ?? null;
  }
  const role = await connectionRole(database.db);
  const warnings: string[] = [];
  if (role.superuser || role.ownsEventLog) {
    warnings.push(
      `connected to PostgreSQL as ${role.user}, ${role.superuser ? 'a superuser' : 'the owner of the events table'}: this role could disable the ` +
        `append-only trigger. Connect the API and workers as a role with only INSERT and SELECT on events ` +
        `(COVEL_MIGRATION_DATABASE_URL for the owner, COVEL_APP_ROLE for the grants; see "Roles for PostgreSQL" in docs/operations.md)`,
    );
  } else {
    // first, so a role that cannot read the migration table hears what it lacks
    const missing = await missingAppPrivileges(database.db);
    if (missing.length) throw new AppRolePrivilegesError(role.user, missing);
  }
  const status = await schemaStatus(database.db);
  if (status.missing.length || status.unknown.length) throw new SchemaNotCurrentError(role.user, status);
  return { applied, granted, warnings };
}
