import type { Projection } from '../events';
import { callKeys, planPrefixReports } from './prefix-reports-plan';
import { loadPrefixState, rememberLatest } from './prefix-reports-state';
import { writeReports } from './prefix-reports-write';

/**
 * `prefix_reports`, kept live from `llm.calling` (the estimate against the previous turn's first
 * request of the same runtime) and `llm.responded` (what the provider, or the emulator, reported
 * as cached), so an expected hit that did not happen is visible.
 *
 * A batch costs at most two statements however many events and sessions it holds: one read of
 * what its calls need (`loadPrefixState`), and one write (`writeReports`: the usage for rows of
 * earlier batches and the new rows; issue 33: two statements before). The rows are those of applying the events one by one, in order.
 */
export const prefixReportsProjection: Projection<'prefix_reports'> = {
  name: 'prefix_reports',
  handles: ['llm.calling@1', 'llm.responded@1'],
  tables: ['prefix_reports'],
  async applyBatch(trx, events) {
    const state = await loadPrefixState(trx, callKeys(events));
    const plan = planPrefixReports(events, state);
    // one statement: the usage update sees the rows before the insert (a report that precedes its call in the log matches no row, as one by one)
    await writeReports(trx, plan);
    rememberLatest(state);
  },
};
