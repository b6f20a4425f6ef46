import type { Kysely, Migration } from 'kysely';

/** A migration module of this folder: both directions. */
interface MigrationModule {
  up(db: Kysely<unknown>): Promise<void>;
  down(db: Kysely<unknown>): Promise<void>;
}

/**
 * Each migration's module, by name, required only when the migration runs (up or down): a start
 * on a database that has them all (every start but the first, every test database made from the
 * migrated template) reads the names alone, and would otherwise load the ~30 modules for nothing.
 */
const MODULES: Record<string, () => Promise<MigrationModule>> = {
  '0001_event_log': () => import('./0001_event_log'),
  '0002_tenants': () => import('./0002_tenants'),
  '0003_projections': () => import('./0003_projections'),
  '0004_summaries': () => import('./0004_summaries'),
  '0005_prefix_reports': () => import('./0005_prefix_reports'),
  '0006_projection_status': () => import('./0006_projection_status'),
  '0007_idempotency_keys': () => import('./0007_idempotency_keys'),
  '0008_log_order': () => import('./0008_log_order'),
  '0009_projection_shards': () => import('./0009_projection_shards'),
  '0010_execution_notify': () => import('./0010_execution_notify'),
  '0011_executions_session_pending': () => import('./0011_executions_session_pending'),
  '0012_plugin_data': () => import('./0012_plugin_data'),
  '0013_media': () => import('./0013_media'),
  '0014_history_turns': () => import('./0014_history_turns'),
  '0015_execution_waiting': () => import('./0015_execution_waiting'),
  '0016_prefix_report_costs': () => import('./0016_prefix_report_costs'),
  '0017_worlds': () => import('./0017_worlds'),
  '0018_world_generations': () => import('./0018_world_generations'),
  '0019_story_path': () => import('./0019_story_path'),
  '0020_session_branches': () => import('./0020_session_branches'),
  '0021_execution_cancelled': () => import('./0021_execution_cancelled'),
  '0022_projection_quarantine': () => import('./0022_projection_quarantine'),
  '0023_session_appended_notify': () => import('./0023_session_appended_notify'),
  '0024_api_keys': () => import('./0024_api_keys'),
  '0025_usage': () => import('./0025_usage'),
  '0026_tenant_limits': () => import('./0026_tenant_limits'),
  '0027_execution_ended_payload': () => import('./0027_execution_ended_payload'),
  '0028_events_append_locked': () => import('./0028_events_append_locked'),
  '0029_inline_rebuilds': () => import('./0029_inline_rebuilds'),
  '0030_lz4_bodies': () => import('./0030_lz4_bodies'),
  '0031_events_stream_preferences': () => import('./0031_events_stream_preferences'),
};

/** A migration as kysely's migrator runs it: its module is loaded when it first runs. */
function onDemand(load: () => Promise<MigrationModule>): Migration {
  return { up: async (db) => (await load()).up(db), down: async (db) => (await load()).down(db) };
}

/** Ordered migrations; names sort in the order they apply. */
export const migrations: Record<string, Migration> = Object.fromEntries(Object.entries(MODULES).map(([name, load]) => [name, onDemand(load)]));
