import { type Kysely, sql } from 'kysely';
import type { StoredEvent } from './event-types';
import type { Database } from './schema';
import { toStoredEvent } from './stored-event';

/**
 * What stands for the request body of a call outside the turn read (`readStreamForTurn`): the
 * shortest JSON text the `llm.calling@1` schema takes. No reader compares it: an audit compares
 * only its own turn's calls.
 */
export const OMITTED_CALL_BODY = '{}';

/**
 * Every event of a stream, in order, as an audit of one turn folds them, but with the request body
 * of each `llm.calling@1` of another turn left out (`OMITTED_CALL_BODY`). The bodies are most of a
 * session's bytes (about 70 % of an 8k-window session's, more with larger windows) and an audit
 * folds every earlier event but compares only its turn's calls: reading, parsing and validating
 * the others' bodies was most of an audit's CPU (PGlite's row parsing, JSON, zod, GC).
 */
export async function readStreamForTurn(db: Kysely<Database>, streamId: string, turnId: string): Promise<StoredEvent[]> {
  // one column a row (a JSON array of the row's columns): PGlite's row parser copies each field into
  // an ArrayBuffer of its own, which cost more than the bytes did on a read of thousands of rows
  const { rows } = await sql<{ r: [string, string, string, number, string, unknown, unknown, string] }>`
    select json_build_array(global_position::text, tenant_id, stream_id, stream_version, type,
      case when type = 'llm.calling@1' and data->>'turnId' is distinct from ${turnId}
        then jsonb_set(data, '{body}', to_jsonb(${sql.lit(OMITTED_CALL_BODY)}::text)) else data end,
      metadata, recorded_at) as r
    from events where stream_id = ${streamId} order by stream_version`.execute(db);
  return rows.map(({ r: [global_position, tenant_id, stream_id, stream_version, type, data, metadata, recorded_at] }) =>
    toStoredEvent({ global_position, tenant_id, stream_id, stream_version, type, data, metadata, recorded_at }),
  );
}
