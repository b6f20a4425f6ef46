import type { Locale } from '../../plugins-sdk';
import { type ExecutionJournal, runtimeKey } from '../journal';
import type { AgentStepInputs } from '../runtime-request';
import type { CatalogRuntime, RuntimeCatalog } from '../runtime-catalog';
import type { ToolSet } from '../tools';
import { foldLoop } from './completion';
import { NO_TOOLS } from './no-tools';
import { agentPolicy } from './policy';

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
}): AgentStepInputs {
  const record = args.execution.agentLoops.get(runtimeKey(args.runtime.pluginId, args.runtime.runtimeId));
  const { conversation } = foldLoop({ policy: agentPolicy(args.runtime), locale: args.locale, record, upTo: args.step });
  return { conversation, tools: (args.tools ?? NO_TOOLS).definitions(args.runtime, args.catalog) };
}
