import { type Kysely, sql } from 'kysely';
import { migrations } from '../../migrations';
import { EngineError } from '../errors';
import type { Database } from './schema';

/**
 * Who may do what in the PostgreSQL schema. Migrations run as the owner of the tables; the API and
 * the workers should connect as an app role that may only read and append the event log (SELECT,
 * INSERT on `events`: no UPDATE, DELETE, TRUNCATE, TRIGGER, and not the owner, so it cannot
 * disable the append-only trigger), write the projections, tenants and checkpoints, and read
 * kysely's migration tables to check the schema is current.
 */
export const EVENT_LOG_TABLE = 'events';
export const MIGRATION_TABLES = ['kysely_migration', 'kysely_migration_lock'] as const;
/**
 * Functions the app role calls, as `to_regprocedure` reads them: the locked append (migration 0028,
 * SECURITY INVOKER: it runs with the caller's SELECT and INSERT on `events`, nothing more) and a
 * stream's inline rebuild epoch (migration 0029, SECURITY INVOKER: the caller's SELECT on
 * `inline_rebuilds`).
 */
export const APP_FUNCTIONS = ['events_append_locked(bigint, text, text, integer, jsonb)', 'inline_rebuild_epoch(text, text)'] as const;

/** An app role name: a plain SQL identifier (quoted where used anyway). */
export const APP_ROLE_PATTERN = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;

export interface SchemaStatus {
  /** Migrations this code has that the database has not applied. */
  missing: string[];
  /** Migrations the database has applied that this code does not know (a newer deployment). */
  unknown: string[];
}

export interface ConnectionRole {
  user: string;
  superuser: boolean;
  /** Whether this role owns (or is a member of the owner of) `events`; null when there is no `events` table yet. */
  ownsEventLog: boolean | null;
  /** Whether this role may create tables in the current schema. */
  mayCreate: boolean;
}

export interface MissingPrivilege {
  /** The table (or, for EXECUTE, the function). */
  table: string;
  privilege: string;
}

export class SchemaNotCurrentError extends EngineError {
  readonly code = 'SCHEMA_NOT_CURRENT';
  readonly category = 'unavailable';
  constructor(
    readonly user: string,
    readonly status: SchemaStatus,
  ) {
    super(
      [
        `the database schema is not current`,
        status.missing.length ? `missing migrations: ${status.missing.join(', ')}` : '',
        status.unknown.length ? `applied migrations this version does not know: ${status.unknown.join(', ')}` : '',
        `and ${user} does not own it, so it does not migrate. Run \`npm run migrate\` with COVEL_MIGRATION_DATABASE_URL set to the owner role's URL (and COVEL_APP_ROLE=${user}), or set COVEL_MIGRATION_DATABASE_URL for this process so it migrates at start-up`,
      ]
        .filter(Boolean)
        .join('; '),
    );
  }
}

export class AppRolePrivilegesError extends EngineError {
  readonly code = 'APP_ROLE_PRIVILEGES_MISSING';
  readonly category = 'unavailable';
  constructor(
    readonly user: string,
    readonly missing: readonly MissingPrivilege[],
  ) {
    super(
      `role ${user} lacks ${missing.map((m) => `${m.privilege} on ${m.table}`).join(', ')}: run \`npm run migrate\` with COVEL_MIGRATION_DATABASE_URL (the owner) and COVEL_APP_ROLE=${user}`,
    );
  }
}

export class AppRoleError extends EngineError {
  readonly code = 'APP_ROLE_INVALID';
  readonly category = 'invalid';
  constructor(
    readonly role: string,
    reason: string,
  ) {
    super(`COVEL_APP_ROLE ${role}: ${reason}`);
  }
}

/** Which migrations are applied, read-only (a role with SELECT on kysely_migration is enough). */
export async function schemaStatus(db: Kysely<Database>): Promise<SchemaStatus> {
  const known = Object.keys(migrations);
  const table = await sql<{ t: string | null }>`select to_regclass(${MIGRATION_TABLES[0]})::text as t`.execute(db);
  const applied = table.rows[0]?.t ? (await sql<{ name: string }>`select name from kysely_migration`.execute(db)).rows.map((r) => r.name) : [];
  return { missing: known.filter((n) => !applied.includes(n)), unknown: applied.filter((n) => !known.includes(n)) };
}

export async function connectionRole(db: Kysely<Database>): Promise<ConnectionRole> {
  const r = await sql<{ user: string; superuser: boolean; owns: boolean | null; create: boolean }>`
    select current_user as "user",
      (select rolsuper from pg_roles where rolname = current_user) as superuser,
      has_schema_privilege(current_schema(), 'CREATE') as "create",
      (select pg_has_role(current_user, c.relowner, 'USAGE') from pg_class c where c.oid = to_regclass(${EVENT_LOG_TABLE})) as owns`.execute(db);
  const row = r.rows[0];
  return { user: row.user, superuser: row.superuser, ownsEventLog: row.owns, mayCreate: row.create };
}

/** What each table of the schema needs for the app role. */
function privilegesFor(table: string): string[] {
  if (table === EVENT_LOG_TABLE) return ['SELECT', 'INSERT'];
  if ((MIGRATION_TABLES as readonly string[]).includes(table)) return ['SELECT'];
  return ['SELECT', 'INSERT', 'UPDATE', 'DELETE'];
}

async function schemaTables(db: Kysely<Database>): Promise<string[]> {
  const r = await sql<{ name: string }>`
    select c.relname as name from pg_class c
    where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'p')
    order by c.relname`.execute(db);
  return r.rows.map((row) => row.name);
}

/** Privileges the connected role needs and lacks (empty for a role the grants step prepared). */
export async function missingAppPrivileges(db: Kysely<Database>): Promise<MissingPrivilege[]> {
  const missing: MissingPrivilege[] = [];
  for (const table of await schemaTables(db)) {
    for (const privilege of privilegesFor(table)) {
      const r = await sql<{ ok: boolean }>`select has_table_privilege(quote_ident(${table}), ${privilege}) as ok`.execute(db);
      if (!r.rows[0].ok) missing.push({ table, privilege });
    }
  }
  for (const signature of APP_FUNCTIONS) {
    // a function the schema does not have yet is the schema check's to report
    const r = await sql<{ ok: boolean }>`
      select to_regprocedure(${signature}) is null or has_function_privilege(to_regprocedure(${signature}), 'EXECUTE') as ok`.execute(db);
    if (!r.rows[0].ok) missing.push({ table: signature.slice(0, signature.indexOf('(')), privilege: 'EXECUTE' });
  }
  return missing;
}

const GRANT_LOCK_KEY = 0x636f76656c67; // "covelg": concurrent GRANTs on one object fail, so one at a time

/**
 * Grants the app role exactly what it needs on every table of the schema, and nothing else (run as
 * the owner, after migrating; idempotent). In one transaction: whatever the role had is revoked,
 * then SELECT, INSERT on `events`; SELECT on the migration tables; SELECT, INSERT, UPDATE, DELETE on
 * every other table (projections, tenants, checkpoints); USAGE on the schema and its sequences;
 * EXECUTE on the functions it calls (`APP_FUNCTIONS`; PUBLIC has it too unless revoked).
 */
export async function grantAppRole(db: Kysely<Database>, role: string): Promise<void> {
  if (!APP_ROLE_PATTERN.test(role)) throw new AppRoleError(role, 'not a plain SQL identifier');
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${GRANT_LOCK_KEY})`.execute(trx);
    const r = await sql<{ superuser: boolean; owns: boolean | null; me: boolean }>`
      select rolsuper as superuser, rolname = current_user as me,
        (select pg_has_role(${role}, c.relowner, 'USAGE') from pg_class c where c.oid = to_regclass(${EVENT_LOG_TABLE})) as owns
      from pg_roles where rolname = ${role}`.execute(trx);
    const found = r.rows[0];
    if (!found) throw new AppRoleError(role, 'no such role: create it first (CREATE ROLE ... LOGIN PASSWORD ...)');
    if (found.me || found.superuser || found.owns) {
      throw new AppRoleError(role, 'is the owner of the tables, a member of the owner role, or a superuser: the app role must be a separate role');
    }
    const [{ schema }] = (await sql<{ schema: string }>`select current_schema() as schema`.execute(trx)).rows;
    const id = sql.id(role);
    const ns = sql.id(schema);
    await sql`revoke all on all tables in schema ${ns} from ${id}`.execute(trx);
    await sql`revoke all on all sequences in schema ${ns} from ${id}`.execute(trx);
    await sql`revoke all on all functions in schema ${ns} from ${id}`.execute(trx);
    await sql`grant usage on schema ${ns} to ${id}`.execute(trx);
    for (const table of await schemaTables(trx)) {
      await sql`grant ${sql.raw(privilegesFor(table).join(', '))} on table ${sql.id(schema, table)} to ${id}`.execute(trx);
    }
    await sql`grant usage on all sequences in schema ${ns} to ${id}`.execute(trx);
    for (const signature of APP_FUNCTIONS) {
      const found = await sql<{ ok: boolean }>`select to_regprocedure(quote_ident(${schema}) || '.' || ${signature}) is not null as ok`.execute(trx);
      if (found.rows[0].ok) await sql`grant execute on function ${sql.id(schema)}.${sql.raw(signature)} to ${id}`.execute(trx);
    }
  });
}
