import type { NewEvent } from '../../events';
import { recordRuntimeOutput } from '../execution/record-output';
import type { AgentRunContext } from './run-context';

/**
 * Records the runtime's output once per execution (a copy of this job that recorded first wins:
 * 'reused') and, when it completes the last stage, the turn's commit in the same append; then hands
 * the session off. A story runtime's output is its story text, a runtime with an output schema its
 * validated JSON text (what `io.inputs` of later stages read), any other its final text.
 * `leading`: events recorded first in the same append (the completing step's `llm.responded@1`).
 */
export function finalizeRuntime(ctx: AgentRunContext, text: string, leading: readonly NewEvent[] = []): Promise<'produced' | 'reused'> {
  return recordRuntimeOutput({ deps: ctx.deps, job: ctx.job, run: ctx.run, runtime: ctx.runtime, catalog: ctx.catalog, text, leading });
}
