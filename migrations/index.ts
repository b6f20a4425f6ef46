import type { Migration } from 'kysely';
import * as m0001 from './0001_event_log';
import * as m0002 from './0002_tenants';
import * as m0003 from './0003_projections';
import * as m0004 from './0004_summaries';
import * as m0005 from './0005_prefix_reports';
import * as m0006 from './0006_projection_status';
import * as m0007 from './0007_idempotency_keys';
import * as m0008 from './0008_log_order';
import * as m0009 from './0009_projection_shards';
import * as m0010 from './0010_execution_notify';
import * as m0011 from './0011_executions_session_pending';
import * as m0012 from './0012_plugin_data';
import * as m0013 from './0013_media';
import * as m0014 from './0014_history_turns';
import * as m0015 from './0015_execution_waiting';
import * as m0016 from './0016_prefix_report_costs';
import * as m0017 from './0017_worlds';
import * as m0018 from './0018_world_generations';
import * as m0019 from './0019_story_path';
import * as m0020 from './0020_session_branches';
import * as m0021 from './0021_execution_cancelled';
import * as m0022 from './0022_projection_quarantine';
import * as m0023 from './0023_session_appended_notify';
import * as m0024 from './0024_api_keys';
import * as m0025 from './0025_usage';
import * as m0026 from './0026_tenant_limits';
import * as m0027 from './0027_execution_ended_payload';
import * as m0028 from './0028_events_append_locked';
import * as m0029 from './0029_inline_rebuilds';
import * as m0030 from './0030_lz4_bodies';
import * as m0031 from './0031_events_stream_preferences';

/** Ordered migrations; names sort in the order they apply. */
export const migrations: Record<string, Migration> = {
  '0001_event_log': m0001,
  '0002_tenants': m0002,
  '0003_projections': m0003,
  '0004_summaries': m0004,
  '0005_prefix_reports': m0005,
  '0006_projection_status': m0006,
  '0007_idempotency_keys': m0007,
  '0008_log_order': m0008,
  '0009_projection_shards': m0009,
  '0010_execution_notify': m0010,
  '0011_executions_session_pending': m0011,
  '0012_plugin_data': m0012,
  '0013_media': m0013,
  '0014_history_turns': m0014,
  '0015_execution_waiting': m0015,
  '0016_prefix_report_costs': m0016,
  '0017_worlds': m0017,
  '0018_world_generations': m0018,
  '0019_story_path': m0019,
  '0020_session_branches': m0020,
  '0021_execution_cancelled': m0021,
  '0022_projection_quarantine': m0022,
  '0023_session_appended_notify': m0023,
  '0024_api_keys': m0024,
  '0025_usage': m0025,
  '0026_tenant_limits': m0026,
  '0027_execution_ended_payload': m0027,
  '0028_events_append_locked': m0028,
  '0029_inline_rebuilds': m0029,
  '0030_lz4_bodies': m0030,
  '0031_events_stream_preferences': m0031,
};
