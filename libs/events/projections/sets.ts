import { executionsProjection } from './executions';
import { pluginDataProjection } from './plugin-data';
import type { InlineProjection, Projection } from './projection';
import { summariesProjection } from './summaries';
import { traceEventsProjection } from './trace-events';
import { turnMessagesProjection } from './turn-messages';
import { worldsProjection } from './worlds';
import { worldGenerationsProjection } from './world-generations';
import { tenantLimitsProjection } from './tenant-limits';

/**
 * What a turn reads right away, applied in the transaction of the append that changes it
 * (`new EventStore(db, { inline: inlineProjections })`): executions, the committed conversation
 * with its compaction marks (turn_messages, history_watermarks), summaries and plugin data, keyed by session;
 * a tenant's worlds, keyed by world; world generation jobs, keyed by job; and a tenant's limits, keyed by its stream.
 */
export const inlineProjections: readonly InlineProjection[] = [
  executionsProjection,
  turnMessagesProjection,
  summariesProjection,
  pluginDataProjection,
  worldsProjection,
  worldGenerationsProjection,
  tenantLimitsProjection,
];

/** Read models off the turn's path, run by a projector from the log (the engine adds its own). */
export const asyncProjections: readonly Projection[] = [traceEventsProjection];
