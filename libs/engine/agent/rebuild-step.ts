import type { BudgetLedger, BudgetMode } from '../../context';
import type { Locale } from '../../plugins-sdk';
import { runLedger } from '../budget';
import { type ExecutionJournal, runtimeKey } from '../journal/journal';
import type { AgentStepInputs } from '../request/runtime-request';
import type { CatalogRuntime, RuntimeCatalog } from '../catalog/runtime-catalog';
import { createToolSet, type ToolSet } from '../tools';
import { foldLoop } from './completion';
import { agentPolicy } from './policy';
import { finalizerPrompt } from './finalizer';
import { resumedStep } from './suspension';

/** The tools' definitions for a rebuild: nothing is executed, so no plugin data is ever read. */
const DEFINITIONS: ToolSet = createToolSet({
  pluginData: {
    scope: () => {
      throw new Error('a rebuild never executes a tool');
    },
  },
});

/**
 * What step `step` of a runtime's loop added to its request, re-derived from the log (the journal
 * as it stood when the call was recorded): the conversation of the recorded earlier steps and the
 * runtime's tool definitions. The same fold the worker's loop reads, so a rebuild is byte-identical.
 */
export function loopStepInputs(args: {
  runtime: CatalogRuntime;
  catalog: RuntimeCatalog;
  execution: ExecutionJournal;
  locale: Locale;
  step: number;
  tools?: ToolSet;
  /** The recorded call's budget mode: `emergency`, the finalizer's rescue of an overflowing step (tools off, the finalizer prompt). */
  mode?: BudgetMode;
}): AgentStepInputs {
  const record = args.execution.agentLoops.get(runtimeKey(args.runtime.pluginId, args.runtime.runtimeId));
  const { conversation, next } = foldLoop({ policy: agentPolicy(args.runtime), locale: args.locale, record, upTo: args.step });
  const tools = (args.tools ?? DEFINITIONS).definitions(args.runtime, args.catalog);
  if (args.mode === 'emergency') return { conversation: [...conversation, finalizerPrompt(args.locale)], tools, toolsOff: true };
  // a finalizer step (after the step limit) has its tools off
  if (next.kind === 'send' && next.mode === 'finalizer') return { conversation, tools, toolsOff: true };
  return { conversation, tools };
}

/**
 * The token budget a recorded call was built with: the ledger the recorded calls of the earlier
 * steps made (the same fold the worker's step reads) and the call's mode; none for a call recorded
 * without a budget (a log before it), so its rebuild applies none.
 */
export function loopStepBudget(args: {
  runtime: CatalogRuntime;
  execution: ExecutionJournal;
  step: number;
  recorded: { mode: BudgetMode } | undefined;
}): { budget: { ledger: BudgetLedger; mode: BudgetMode } } | Record<string, never> {
  if (!args.recorded) return {};
  const record = args.execution.agentLoops.get(runtimeKey(args.runtime.pluginId, args.runtime.runtimeId));
  return { budget: { ledger: runLedger(record?.ledgers, args.step, resumedStep(args.execution, args.runtime)), mode: args.recorded.mode } };
}
