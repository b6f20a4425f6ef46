import { precompiled } from '../precompiled';
import type { Database } from '../schema';
import { eventByEvent, type Projection } from './projection';

type TraceRow = {
  globalPosition: string;
  tenantId: string;
  sessionId: string;
  executionId: string;
  turnId: string;
  type: string;
  callId: string;
  pluginId: string;
  runtimeId: string;
  data: string;
  recordedAt: Date;
};

/** Compiled once (`precompiled`): two rows of every model call. */
const insertTrace = precompiled<Database, TraceRow>(
  ['globalPosition', 'tenantId', 'sessionId', 'executionId', 'turnId', 'type', 'callId', 'pluginId', 'runtimeId', 'data', 'recordedAt'],
  (db, p) =>
    db
      .insertInto('trace_events')
      .values({
        global_position: p.globalPosition,
        tenant_id: p.tenantId,
        session_id: p.sessionId,
        execution_id: p.executionId,
        turn_id: p.turnId,
        type: p.type,
        call_id: p.callId,
        plugin_id: p.pluginId,
        runtime_id: p.runtimeId,
        data: p.data,
        recorded_at: p.recordedAt,
      })
      .onConflict((oc) => oc.column('global_position').doNothing()),
);

/** `trace_events`: every `llm.calling` (with the exact request body) and `llm.responded`. */
export const traceEventsProjection: Projection = eventByEvent({
  name: 'trace_events',
  handles: ['llm.calling@1', 'llm.responded@1'],
  tables: ['trace_events'],
  async apply(trx, event) {
    if (event.type !== 'llm.calling@1' && event.type !== 'llm.responded@1') return;
    await insertTrace(trx, {
      globalPosition: String(event.globalPosition),
      tenantId: event.tenantId,
      sessionId: event.streamId,
      executionId: event.data.executionId,
      turnId: event.data.turnId,
      type: event.type,
      callId: event.data.callId,
      pluginId: event.data.pluginId,
      runtimeId: event.data.runtimeId,
      data: JSON.stringify(event.data),
      recordedAt: new Date(event.recordedAt),
    });
  },
});
