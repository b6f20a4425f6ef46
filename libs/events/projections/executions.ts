import type { EventType, StoredEvent } from '../event-types';
import { eventByEvent, type InlineProjection } from './projection';

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

/**
 * A progress mark (`runtime.output.produced@1`, `llm.calling@1`: `updated_at` while running) is
 * covered when the next event of the same append for the same execution also sets `updated_at`
 * whenever it is running, to the same time: the mark changes no status, so that event finds the
 * row as the mark would have left it and writes the same `updated_at` (a commit appended with the
 * last output: one update instead of two).
 */
function progressCovered(event: StoredEvent, later: readonly StoredEvent[]): boolean {
  if (event.type !== 'runtime.output.produced@1' && event.type !== 'llm.calling@1') return false;
  const next = later.find((e) => executionsProjection.handles.includes(e.type) && executionOf(e) === event.data.executionId);
  return next !== undefined && next.recordedAt === event.recordedAt && UPDATES.includes(next.type);
}

/** `executions`: status of every player input's execution (queued → running (⇄ waiting) → committed | failed | cancelled). */
export const executionsProjection: InlineProjection = eventByEvent({
  name: 'executions',
  handles: [...CREATES, ...UPDATES],
  tables: ['executions'],
  coveredBy: progressCovered,
  async apply(trx, event) {
    const at = new Date(event.recordedAt);
    switch (event.type) {
      case 'player-input.submitted@1':
      case 'runtime.activated@1':
        await trx
          .insertInto('executions')
          .values({
            execution_id: event.data.executionId,
            tenant_id: event.tenantId,
            session_id: event.streamId,
            turn_id: event.data.turnId,
            status: 'queued',
            attempts: 0,
            worker_id: null,
            submitted_version: event.streamVersion,
            error_code: null,
            error_message: null,
            submitted_at: at,
            updated_at: at,
          })
          .onConflict((oc) => oc.column('execution_id').doNothing())
          .execute();
        return;
      case 'execution.started@1':
        await trx
          .updateTable('executions')
          .set({ status: 'running', attempts: event.data.attempt, worker_id: event.data.workerId, updated_at: at })
          .where('execution_id', '=', event.data.executionId)
          .where('status', 'in', ['queued', 'running'])
          .execute();
        return;
      case 'runtime.output.produced@1':
      case 'llm.calling@1':
        // progress: keeps a live execution from looking stalled to the sweeper (llm.responded is
        // always appended together with its runtime.output.produced, which marks it)
        await trx
          .updateTable('executions')
          .set({ updated_at: at })
          .where('execution_id', '=', event.data.executionId)
          .where('status', '=', 'running')
          .execute();
        return;
      case 'execution.suspended@1':
        // shown as `waiting` (with what for) until its resume; the sweeper leaves it
        await trx
          .updateTable('executions')
          .set({ waiting_for: JSON.stringify(event.data.waitingFor), updated_at: at })
          .where('execution_id', '=', event.data.executionId)
          .where('status', '=', 'running')
          .execute();
        return;
      case 'execution.resumed@1':
        // running again; idle from now on, the sweeper enqueues it (a resume whose enqueue was lost)
        await trx.updateTable('executions').set({ waiting_for: null, updated_at: at }).where('execution_id', '=', event.data.executionId).execute();
        return;
      case 'turn.committed@1':
        await trx
          .updateTable('executions')
          .set({ status: 'committed', waiting_for: null, updated_at: at })
          .where('execution_id', '=', event.data.executionId)
          .execute();
        return;
      case 'execution.failed@1':
        await trx
          .updateTable('executions')
          .set({ status: 'failed', error_code: event.data.error.code, error_message: event.data.error.message, updated_at: at })
          .where('execution_id', '=', event.data.executionId)
          .where('status', 'not in', ['committed', 'cancelled'])
          .execute();
        return;
      case 'execution.cancelled@1':
        // appended only while the execution is pending (its journal says so): it ends here, never runs again
        await trx
          .updateTable('executions')
          .set({ status: 'cancelled', waiting_for: null, updated_at: at })
          .where('execution_id', '=', event.data.executionId)
          .where('status', 'in', ['queued', 'running'])
          .execute();
        return;
      default:
        return;
    }
  },
});
