import { InvalidEventError } from './errors';
import { eventSchemas, isEventType, type StoredEvent } from './event-types';

/** An `events` row as a typed event (its payload parsed with its type's schema). */
export function toStoredEvent(row: {
  global_position: string | number;
  tenant_id: string;
  stream_id: string;
  stream_version: number;
  type: string;
  data: unknown;
  metadata: unknown;
  recorded_at: Date | string;
}): StoredEvent {
  if (!isEventType(row.type)) throw new InvalidEventError(row.type, [{ path: 'type', message: 'unknown event type in log' }]);
  return {
    globalPosition: Number(row.global_position),
    tenantId: row.tenant_id,
    streamId: row.stream_id,
    streamVersion: row.stream_version,
    type: row.type,
    data: eventSchemas[row.type].parse(row.data),
    metadata: (row.metadata ?? {}) as Record<string, unknown>,
    recordedAt: new Date(row.recorded_at).toISOString(),
  } as StoredEvent;
}
