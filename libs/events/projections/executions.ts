import { type RawBuilder, sql } from 'kysely';
import type { EventType, StoredEvent } from '../event-types';
import { precompiled } from '../precompiled';
import type { Database } from '../schema';
import { type Covered, eventByEvent, type InlineProjection, type PendingEvent, type SqlWrite, type SqlWriteContext } from './projection';

/** The events that make an execution's row (insert, on conflict nothing). */
const CREATES: readonly EventType[] = ['player-input.submitted@1', 'runtime.activated@1'];

/**
 * The events that update it: each sets `updated_at` whenever the execution is running, and changes
 * nothing a progress mark depends on (an insert, which sets nothing on an existing row, is not one).
 */
const UPDATES: readonly EventType[] = [
  'execution.started@1',
  'runtime.output.produced@1',
  'llm.calling@1',
  'turn.committed@1',
  'execution.failed@1',
  'execution.suspended@1',
  'execution.resumed@1',
  'execution.cancelled@1',
];

const executionOf = (event: StoredEvent): string | undefined => (event.data as { executionId?: unknown }).executionId as string | undefined;

/** The progress marks: `updated_at` while running, nothing else. */
const isMark = (event: StoredEvent) => event.type === 'runtime.output.produced@1' || event.type === 'llm.calling@1';

/**
 * A progress mark (`runtime.output.produced@1`, `llm.calling@1`: `updated_at` while running) is
 * covered by the other events of its append for the same execution, recorded at the same time:
 *
 * - LATER: the next of them also sets `updated_at` whenever the execution is running, to the same
 *   time: the mark changes no status, so that event finds the row as the mark would have left it
 *   and writes the same `updated_at` (a commit appended with the last output: one update, not two).
 * - EARLIER: one of them before it is an update that is not a mark (a mark may itself be left out),
 *   and those between the two are of the same time. Such an update leaves the row running with
 *   `updated_at` = its time (started, suspended, resumed, on a row they change) or not running
 *   (committed, failed, cancelled; or a row the others leave as it is, which then was not running);
 *   a mark of the same time keeps that so, applied or left out, and so does an insert (on conflict
 *   nothing, or a queued row). The mark would write nothing new (`execution.started@1` appended
 *   with the stage's first `llm.calling@1`: one update, not two).
 *
 * Either way the rows are those of every event applied (a rebuild, a replay: the same rows).
 */
function progressCovered(event: StoredEvent, { earlier, later }: Parameters<Covered>[1]): boolean {
  if (!isMark(event)) return false;
  const id = executionOf(event);
  const sameExecution = (e: StoredEvent) => executionsProjection.handles.includes(e.type) && executionOf(e) === id;
  const next = later.find(sameExecution);
  if (next !== undefined && next.recordedAt === event.recordedAt && UPDATES.includes(next.type)) return true;
  for (let i = earlier.length - 1; i >= 0; i--) {
    const before = earlier[i];
    if (!sameExecution(before)) continue;
    if (before.recordedAt !== event.recordedAt) return false;
    if (UPDATES.includes(before.type) && !isMark(before)) return true;
  }
  return false;
}

type Db = Database;

/** The row of a new execution (insert, on conflict nothing). */
const insertExecution = precompiled<Db, { executionId: string; tenantId: string; sessionId: string; turnId: string; version: number; at: Date }>(
  ['executionId', 'tenantId', 'sessionId', 'turnId', 'version', 'at'],
  (db, p) =>
    db
      .insertInto('executions')
      .values({
        execution_id: p.executionId,
        tenant_id: p.tenantId,
        session_id: p.sessionId,
        turn_id: p.turnId,
        status: 'queued',
        attempts: 0,
        worker_id: null,
        submitted_version: p.version,
        error_code: null,
        error_message: null,
        submitted_at: p.at,
        updated_at: p.at,
      })
      .onConflict((oc) => oc.column('execution_id').doNothing()),
);

const markStarted = precompiled<Db, { attempt: number; workerId: string; at: Date; executionId: string }>(
  ['attempt', 'workerId', 'at', 'executionId'],
  (db, p) =>
    db
      .updateTable('executions')
      .set({ status: 'running', attempts: p.attempt, worker_id: p.workerId, updated_at: p.at })
      .where('execution_id', '=', p.executionId)
      .where('status', 'in', ['queued', 'running']),
);

const markProgress = precompiled<Db, { at: Date; executionId: string }>(['at', 'executionId'], (db, p) =>
  db.updateTable('executions').set({ updated_at: p.at }).where('execution_id', '=', p.executionId).where('status', '=', 'running'),
);

const markSuspended = precompiled<Db, { waitingFor: string; at: Date; executionId: string }>(['waitingFor', 'at', 'executionId'], (db, p) =>
  db.updateTable('executions').set({ waiting_for: p.waitingFor, updated_at: p.at }).where('execution_id', '=', p.executionId).where('status', '=', 'running'),
);

const markResumed = precompiled<Db, { at: Date; executionId: string }>(['at', 'executionId'], (db, p) =>
  db.updateTable('executions').set({ waiting_for: null, updated_at: p.at }).where('execution_id', '=', p.executionId),
);

const markCommitted = precompiled<Db, { at: Date; executionId: string }>(['at', 'executionId'], (db, p) =>
  db.updateTable('executions').set({ status: 'committed', waiting_for: null, updated_at: p.at }).where('execution_id', '=', p.executionId),
);

const markFailed = precompiled<Db, { code: string; message: string; at: Date; executionId: string }>(['code', 'message', 'at', 'executionId'], (db, p) =>
  db
    .updateTable('executions')
    .set({ status: 'failed', error_code: p.code, error_message: p.message, updated_at: p.at })
    .where('execution_id', '=', p.executionId)
    .where('status', 'not in', ['committed', 'cancelled']),
);

const markCancelled = precompiled<Db, { at: Date; executionId: string }>(['at', 'executionId'], (db, p) =>
  db
    .updateTable('executions')
    .set({ status: 'cancelled', waiting_for: null, updated_at: p.at })
    .where('execution_id', '=', p.executionId)
    .where('status', 'in', ['queued', 'running']),
);

/**
 * `event`'s write in the append's statement (`Projection.sqlFor`): the statements of `apply` above,
 * with the event's stream version and time read from its inserted row (`ctx.row`). One row each.
 */
function executionSql(event: PendingEvent, ctx: SqlWriteContext): SqlWrite | null {
  const write = (executionId: string, body: RawBuilder<unknown>): SqlWrite => ({ ctes: [{ name: 'w', body }], rows: [`executions:${executionId}`] });
  const update = (executionId: string, set: RawBuilder<unknown>, where: RawBuilder<unknown> = sql``) =>
    write(executionId, sql`update executions set ${set} from ${ctx.row} e where execution_id = ${executionId}::text ${where}`);
  switch (event.type) {
    case 'player-input.submitted@1':
    case 'runtime.activated@1':
      return write(
        event.data.executionId,
        sql`insert into executions (execution_id, tenant_id, session_id, turn_id, status, attempts, worker_id, submitted_version, error_code, error_message, submitted_at, updated_at)
          select ${event.data.executionId}::text, ${event.tenantId}::text, ${event.streamId}::text, ${event.data.turnId}::text, 'queued', 0, null, e.stream_version, null, null, e.recorded_at, e.recorded_at
          from ${ctx.row} e
          on conflict (execution_id) do nothing`,
      );
    case 'execution.started@1':
      return update(
        event.data.executionId,
        sql`status = 'running', attempts = ${event.data.attempt}::int, worker_id = ${event.data.workerId}::text, updated_at = e.recorded_at`,
        sql`and status in ('queued', 'running')`,
      );
    case 'runtime.output.produced@1':
    case 'llm.calling@1':
      return update(event.data.executionId, sql`updated_at = e.recorded_at`, sql`and status = 'running'`);
    case 'execution.suspended@1':
      return update(
        event.data.executionId,
        sql`waiting_for = ${JSON.stringify(event.data.waitingFor)}::text, updated_at = e.recorded_at`,
        sql`and status = 'running'`,
      );
    case 'execution.resumed@1':
      return update(event.data.executionId, sql`waiting_for = null, updated_at = e.recorded_at`);
    case 'turn.committed@1':
      return update(event.data.executionId, sql`status = 'committed', waiting_for = null, updated_at = e.recorded_at`);
    case 'execution.failed@1':
      return update(
        event.data.executionId,
        sql`status = 'failed', error_code = ${event.data.error.code}::text, error_message = ${event.data.error.message}::text, updated_at = e.recorded_at`,
        sql`and status not in ('committed', 'cancelled')`,
      );
    case 'execution.cancelled@1':
      return update(
        event.data.executionId,
        sql`status = 'cancelled', waiting_for = null, updated_at = e.recorded_at`,
        sql`and status in ('queued', 'running')`,
      );
    default:
      return null;
  }
}

/**
 * `executions`: status of every player input's execution (queued → running (⇄ waiting) → committed | failed | cancelled).
 * Its statements are compiled once (`precompiled`): it runs several times in every turn's appends.
 */
export const executionsProjection: InlineProjection = eventByEvent({
  name: 'executions',
  handles: [...CREATES, ...UPDATES],
  tables: ['executions'],
  coveredBy: progressCovered,
  sqlFor: executionSql,
  async apply(trx, event) {
    const at = new Date(event.recordedAt);
    switch (event.type) {
      case 'player-input.submitted@1':
      case 'runtime.activated@1':
        await insertExecution(trx, {
          executionId: event.data.executionId,
          tenantId: event.tenantId,
          sessionId: event.streamId,
          turnId: event.data.turnId,
          version: event.streamVersion,
          at,
        });
        return;
      case 'execution.started@1':
        await markStarted(trx, { attempt: event.data.attempt, workerId: event.data.workerId, at, executionId: event.data.executionId });
        return;
      case 'runtime.output.produced@1':
      case 'llm.calling@1':
        // progress: keeps a live execution from looking stalled to the sweeper (llm.responded is
        // always appended together with its runtime.output.produced, which marks it)
        await markProgress(trx, { at, executionId: event.data.executionId });
        return;
      case 'execution.suspended@1':
        // shown as `waiting` (with what for) until its resume; the sweeper leaves it
        await markSuspended(trx, { waitingFor: JSON.stringify(event.data.waitingFor), at, executionId: event.data.executionId });
        return;
      case 'execution.resumed@1':
        // running again; idle from now on, the sweeper enqueues it (a resume whose enqueue was lost)
        await markResumed(trx, { at, executionId: event.data.executionId });
        return;
      case 'turn.committed@1':
        await markCommitted(trx, { at, executionId: event.data.executionId });
        return;
      case 'execution.failed@1':
        await markFailed(trx, { code: event.data.error.code, message: event.data.error.message, at, executionId: event.data.executionId });
        return;
      case 'execution.cancelled@1':
        // appended only while the execution is pending (its journal says so): it ends here, never runs again
        await markCancelled(trx, { at, executionId: event.data.executionId });
        return;
      default:
        return;
    }
  },
});
