import { type Kysely, sql } from 'kysely';
import type { Database } from '../../schema';
import type { WaitForRequest, WaitResult } from './types';

const DEFAULT_POLL_MS = 25;

/**
 * Waits until the projection's shard of the stream has applied the event (default: the stream's
 * last): reads the event's place in the log once, then the shard's row every `pollMs`. Answers
 * `stopped` at once when the shard is failing before it, `timed-out` after `timeoutMs`.
 */
export async function waitForPosition(db: Kysely<Database>, request: WaitForRequest): Promise<WaitResult> {
  const deadline = Date.now() + request.timeoutMs;
  const target = await db
    .selectFrom('events')
    .select(['transaction_id', 'global_position', 'log_partition'])
    .where('stream_id', '=', request.streamId)
    .$if(request.globalPosition !== undefined, (q) => q.where('global_position', '=', String(request.globalPosition)))
    .orderBy('stream_version', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!target) return { status: 'reached' }; // nothing of that stream to wait for
  const shard = Number(target.log_partition);
  for (;;) {
    const { rows } = await sql<{ passed: boolean; failing: boolean }>`
      select (transaction_id, global_position) >= (${String(target.transaction_id)}::xid8, ${String(target.global_position)}::bigint) as passed,
             failing_since is not null as failing
      from projection_shards where projection = ${request.projection} and shard = ${shard}`.execute(db);
    const row = rows[0];
    if (row?.passed) return { status: 'reached' };
    if (row?.failing) return { status: 'stopped', shard };
    const left = deadline - Date.now();
    if (left <= 0) return { status: 'timed-out', shard };
    await new Promise((resolve) => setTimeout(resolve, Math.min(request.pollMs ?? DEFAULT_POLL_MS, left)));
  }
}
