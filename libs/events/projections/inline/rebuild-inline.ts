import { type Kysely, sql, type Transaction } from 'kysely';
import { InlineProjectionFailedError } from '../../errors';
import { toStoredEvent } from '../../event-store';
import type { StoredEvent } from '../../event-types';
import type { Database } from '../../schema';
import { lockStream } from '../../stream-lock';
import type { InlineProjection } from '../projection';
import { applyInline } from './apply-inline';

/** Streams listed per query, and events read per query within a stream. */
const STREAM_PAGE = 200;
const EVENT_PAGE = 500;

export interface RebuildInlineOptions {
  db: Kysely<Database>;
  projections: readonly InlineProjection[];
  /** Only the streams with an event after this global position; default: every stream. */
  since?: number;
  /** Streams listed per query (default 200): a test passes a small page to cross page boundaries with few streams. */
  streamPage?: number;
  /** Called after each page of streams. */
  onProgress?: (progress: RebuildInlineProgress) => void;
}

export interface RebuildInlineProgress {
  streams: number;
  events: number;
  /** The last stream rebuilt (streams go in stream id order). */
  lastStreamId: string;
}

/** A stream whose rows could not be rebuilt: its old rows are kept (its transaction rolled back). */
export interface RebuildInlineFailure {
  streamId: string;
  /** `InlineProjectionFailedError` when a projection threw (it names the projection and event type). */
  error: unknown;
}

export interface RebuildInlineResult {
  streams: number;
  /** Events handed to projections. */
  events: number;
  failures: RebuildInlineFailure[];
}

/**
 * Rebuilds inline projections from the log, stream by stream, each stream in its own transaction
 * holding that stream's lock: its rebuild epoch is bumped (`inline_rebuilds`, migration 0029), its
 * rows are deleted from the projections' tables (and any failure an old projection runner recorded
 * for it), then its events applied again. Never one long
 * transaction: a stream being appended to waits at most for its own rebuild, others never wait,
 * and an append that commits during the rebuild is either read by its stream's rebuild or applied
 * on top of it. For replay and repair, and to bring an existing deployment's rows up to date.
 * A stream that fails is reported and keeps its old rows; the others go on.
 */
export async function rebuildInline(options: RebuildInlineOptions): Promise<RebuildInlineResult> {
  const { db, projections, streamPage = STREAM_PAGE } = options;
  if (!Number.isSafeInteger(streamPage) || streamPage < 1) throw new RangeError(`rebuildInline: streamPage must be a positive integer, got ${streamPage}`);
  const result: RebuildInlineResult = { streams: 0, events: 0, failures: [] };
  let after = '';
  for (;;) {
    const page =
      options.since === undefined
        ? // every stream has exactly one version 1: one row per stream, in the index's order
          await db
            .selectFrom('events')
            .select('stream_id')
            .where('stream_version', '=', 1)
            .where('stream_id', '>', after)
            .orderBy('stream_id')
            .limit(streamPage)
            .execute()
        : await db
            .selectFrom('events')
            .select('stream_id')
            .distinct()
            .where('global_position', '>', String(options.since))
            .where('stream_id', '>', after)
            .orderBy('stream_id')
            .limit(streamPage)
            .execute();
    for (const { stream_id: streamId } of page) {
      try {
        result.events += await db.transaction().execute((trx) => rebuildStream(trx, projections, streamId));
      } catch (error) {
        result.failures.push({ streamId, error });
      }
      result.streams++;
    }
    if (page.length === 0) return result;
    after = page[page.length - 1].stream_id;
    options.onProgress?.({ streams: result.streams, events: result.events, lastStreamId: after });
    if (page.length < streamPage) return result;
  }
}

/**
 * One stream, in the caller's transaction (`rebuildInline`'s step; exported for the test that holds
 * the stream's lock before it): returns the number of events applied.
 */
export async function rebuildStream(trx: Transaction<Database>, projections: readonly InlineProjection[], streamId: string): Promise<number> {
  await lockStream(trx, streamId);
  // the stream's rebuild epoch moves with its rows: a one-statement append whose snapshot predates
  // this commit and whose lock follows it sees the epoch move, and writes nothing (`insertAtVersion`)
  await sql`insert into inline_rebuilds (stream_id, tenant_id, epoch)
    select stream_id, tenant_id, 1 from events where stream_id = ${streamId} and stream_version = 1
    on conflict (stream_id) do update set epoch = inline_rebuilds.epoch + 1`.execute(trx);
  for (const projection of projections) {
    for (const table of projection.tables)
      await sql`delete from ${sql.table(table)} where ${sql.ref(projection.streamKey ?? 'session_id')} = ${streamId}`.execute(trx);
  }
  await trx
    .deleteFrom('projection_failures')
    .where('stream_id', '=', streamId)
    .where(
      'projection',
      'in',
      projections.map((p) => p.name),
    )
    .execute();
  const handled = new Set<string>(projections.flatMap((p) => p.handles));
  let version = 0;
  let applied = 0;
  for (;;) {
    const rows = await trx
      .selectFrom('events')
      .selectAll()
      .where('stream_id', '=', streamId)
      .where('stream_version', '>', version)
      .orderBy('stream_version')
      .limit(EVENT_PAGE)
      .execute();
    // only events a projection reads are decoded (an old type no schema reads may sit in between)
    const events: StoredEvent[] = rows.filter((r) => handled.has(r.type)).map((r) => decode(projections, r));
    await applyInline(trx, projections, events);
    applied += events.length;
    if (rows.length < EVENT_PAGE) return applied;
    version = rows[rows.length - 1].stream_version;
  }
}

/** The stored event; one no schema reads fails as the projections that handle its type. */
function decode(projections: readonly InlineProjection[], row: Parameters<typeof toStoredEvent>[0]): StoredEvent {
  try {
    return toStoredEvent(row);
  } catch (error) {
    const names = projections.filter((p) => (p.handles as readonly string[]).includes(row.type)).map((p) => p.name);
    throw new InlineProjectionFailedError(names.join(', '), row.type, row.stream_id, row.tenant_id, error);
  }
}

/**
 * Brings the inline projections' rows of an existing deployment up to date, once, after the upgrade
 * that made them inline: the old projection runner kept them up to its checkpoints, so the
 * streams with events after the lowest of them are rebuilt (`rebuildInline` with `since`), then
 * the old checkpoints are dropped. Returns null when there is nothing to do (a new deployment, or
 * done before). Safe while appends run, and when several processes start at once (a stream is
 * rebuilt under its lock; a second pass finds the same rows). If a stream fails, the checkpoints
 * stay, so the next start tries again.
 */
export async function upgradeInline(options: Omit<RebuildInlineOptions, 'since'>): Promise<RebuildInlineResult | null> {
  const names = options.projections.map((p) => p.name);
  const checkpoints = await options.db.selectFrom('projection_checkpoints').select('position').where('name', 'in', names).execute();
  if (checkpoints.length === 0) return null;
  const since = Math.min(...checkpoints.map((c) => Number(c.position)));
  const result = await rebuildInline({ ...options, since });
  if (result.failures.length === 0) await options.db.deleteFrom('projection_checkpoints').where('name', 'in', names).execute();
  return result;
}
