import { eventByEvent, type Projection } from './projection';

/** `trace_events`: every `llm.calling` (with the exact request body) and `llm.responded`. */
export const traceEventsProjection: Projection = eventByEvent({
  name: 'trace_events',
  handles: ['llm.calling@1', 'llm.responded@1'],
  tables: ['trace_events'],
  async apply(trx, event) {
    if (event.type !== 'llm.calling@1' && event.type !== 'llm.responded@1') return;
    await trx
      .insertInto('trace_events')
      .values({
        global_position: String(event.globalPosition),
        tenant_id: event.tenantId,
        session_id: event.streamId,
        execution_id: event.data.executionId,
        turn_id: event.data.turnId,
        type: event.type,
        call_id: event.data.callId,
        plugin_id: event.data.pluginId,
        runtime_id: event.data.runtimeId,
        data: JSON.stringify(event.data),
        recorded_at: new Date(event.recordedAt),
      })
      .onConflict((oc) => oc.column('global_position').doNothing())
      .execute();
  },
});
