import { randomUUID } from 'node:crypto';
import type { NewEvent } from '../../events';
import { type ExecutionJournal, type RuntimeOutput, runtimeKey } from '../journal/journal';
import type { RuntimeJob } from '../queue';
import type { CatalogRuntime, RuntimeCatalog } from '../catalog/runtime-catalog';
import { commitEvents, missingRuntimes } from './commit';
import type { TurnDeps } from './deps';
import type { ExecutionRun } from './fenced-append';
import { handOff } from './hand-off';

export interface RecordOutputArgs {
  deps: TurnDeps;
  job: RuntimeJob;
  run: ExecutionRun;
  runtime: CatalogRuntime;
  /** The catalog generation the execution captured. */
  catalog: RuntimeCatalog;
  /** The output text (a story, a structured runtime's JSON text, a function's result as JSON). */
  text: string;
  /** Recorded first in the same append, whether or not this job records the output (the completing step's `llm.responded@1`). */
  leading?: readonly NewEvent[];
  /** The output's effects, recorded only with the output: events before it (plugin-data writes) and after it (emitted activations). */
  effects?: (current: ExecutionJournal) => { before: readonly NewEvent[]; after: readonly NewEvent[] };
}

/**
 * Records a runtime's output once per execution — a copy of this job that recorded first wins
 * ('reused', and only `leading` is appended) — with its effects and, when it completes the last
 * stage, the turn's commit, all in one append; then hands the session off. The one place an
 * agent runtime's and a function runtime's output is recorded.
 */
export async function recordRuntimeOutput(args: RecordOutputArgs): Promise<'produced' | 'reused'> {
  const { text, leading = [], ...rest } = args;
  const result = await recordRuntimeOutputLed({ ...rest, lead: () => ({ events: leading, text }) });
  if (result === 'declined') throw new Error('an output whose lead is unconditional was declined');
  return result;
}

/**
 * `recordRuntimeOutput` whose leading events and output text are built from the journal at the
 * append, like the rest (again on every rebuild): `lead` answering `undefined` (what the output
 * rested on is no longer so, e.g. a copy of this job recorded the completing tool's outcome first)
 * appends nothing at all ('declined'), and the caller goes on from the journal.
 */
export async function recordRuntimeOutputLed(
  args: Omit<RecordOutputArgs, 'text' | 'leading'> & {
    lead: (current: ExecutionJournal) => { events: readonly NewEvent[]; text: string } | undefined;
  },
): Promise<'produced' | 'reused' | 'declined'> {
  const { deps, job, run, runtime, catalog } = args;
  const key = runtimeKey(job.pluginId, job.runtimeId);
  let result: 'produced' | 'reused' | 'declined' = 'declined';
  let committed = false;
  await run.append((current) => {
    committed = false;
    const lead = args.lead(current);
    result = lead === undefined ? 'declined' : current.outputs.has(key) ? 'reused' : 'produced';
    if (lead === undefined) return [];
    if (result === 'reused') return [...lead.events];
    const output: RuntimeOutput = {
      stage: runtime.stage,
      pluginId: job.pluginId,
      runtimeId: runtime.runtimeId,
      outputKind: runtime.manifest.outputKind,
      messageId: randomUUID(),
      text: lead.text,
      attempt: job.attempt,
      midTurnBefore: current.midTurnMessages.length,
    };
    const outputs = new Map(current.outputs).set(key, output);
    committed = missingRuntimes(catalog, outputs, current.activation).length === 0;
    const effects = args.effects?.(current) ?? { before: [], after: [] };
    // the assets this append records (a function's) are shown by the commit it carries too
    const assets = [...current.assets, ...effects.before.flatMap((e) => (e.type === 'asset.generated@1' ? [e.data] : []))];
    return [
      ...lead.events,
      ...effects.before,
      { type: 'runtime.output.produced@1', data: { executionId: job.executionId, turnId: current.turnId, ...outputData(output) } },
      ...effects.after,
      ...(committed ? commitEvents(catalog, { ...current, outputs, assets }, job.attempt) : []),
    ];
  });
  if (committed) await handOff(deps, job, run.journal);
  return result;
}

/** The output as `runtime.output.produced@1` records it (the journal derives `midTurnBefore` from the log). */
function outputData({ midTurnBefore: _, ...recorded }: RuntimeOutput) {
  return recorded;
}
