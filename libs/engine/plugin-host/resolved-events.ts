import type { NewEvent } from '../../events';
import { ExtensionResultRaceError } from '../errors';
import type { ExecutionJournal } from '../journal/journal';
import type { FreshResult } from './resolver';

/**
 * The `extension.resolved@1` events of handler results a live resolver obtained that the execution
 * has not recorded yet. A result another job of the execution recorded first (a copy of this job,
 * a lost lock) is kept, and when it differs from ours the request built from ours is not what the
 * log would rebuild: `ExtensionResultRaceError` (nothing is appended, the job is tried again).
 */
export function resolvedEvents(fresh: readonly FreshResult[], current: ExecutionJournal, attempt: number): NewEvent[] {
  return fresh
    .map((r) => {
      const first = current.extensionResults.get(r.key);
      if (first !== undefined && first !== r.result)
        throw new ExtensionResultRaceError({ executionId: current.executionId, pluginId: r.pluginId, point: r.point, extensionId: r.extensionId });
      return r;
    })
    .filter((r) => !current.extensionResults.has(r.key))
    .map((r) => ({
      type: 'extension.resolved@1' as const,
      data: {
        executionId: current.executionId,
        turnId: current.turnId,
        attempt,
        point: r.point,
        pluginId: r.pluginId,
        extensionId: r.extensionId,
        inputHash: r.inputHash,
        result: r.result,
      },
    }));
}
