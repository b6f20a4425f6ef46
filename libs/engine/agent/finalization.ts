import { randomUUID } from 'node:crypto';
import type { NewEvent } from '../../events';
import { type RuntimeOutput, runtimeKey } from '../journal';
import { commitEvent, missingRuntimes } from '../turn/commit';
import { handOff } from '../turn/hand-off';
import type { AgentRunContext } from './run-context';

/**
 * Records the runtime's output once per execution (a copy of this job that recorded first wins:
 * 'reused') and, when it completes the last stage, the turn's commit in the same append; then hands
 * the session off. A story runtime's output is its story text, a runtime with an output schema its
 * validated JSON text (what `io.inputs` of later stages read), any other its final text.
 * `leading`: events recorded first in the same append (the completing step's `llm.responded@1`).
 */
export async function finalizeRuntime(ctx: AgentRunContext, text: string, leading: readonly NewEvent[] = []): Promise<'produced' | 'reused'> {
  const { deps, job, run, runtime, catalog } = ctx;
  const key = runtimeKey(job.pluginId, job.runtimeId);
  let produced = false;
  let committed = false;
  await run.append((current) => {
    produced = !current.outputs.has(key);
    if (!produced) return [...leading];
    const output: RuntimeOutput = {
      stage: runtime.stage,
      pluginId: job.pluginId,
      runtimeId: runtime.runtimeId,
      outputKind: runtime.manifest.outputKind,
      messageId: randomUUID(),
      text,
      attempt: job.attempt,
    };
    const outputs = new Map(current.outputs).set(key, output);
    committed = missingRuntimes(catalog, outputs, current.activation).length === 0;
    return [
      ...leading,
      { type: 'runtime.output.produced@1', data: { executionId: job.executionId, turnId: current.turnId, ...output } },
      ...(committed ? [commitEvent(catalog, { ...current, outputs }, job.attempt)] : []),
    ];
  });
  if (committed) await handOff(deps, job, run.journal);
  return produced ? 'produced' : 'reused';
}
