import type { SelfDataBlock } from '../../context';
import type { ChatMessage } from '../../providers';
import { executionRequestInputs, resolveRuntimeExports } from '../inputs';
import { executionOutputs } from '../journal/journal';
import type { RuntimeRequestInputs } from '../request/runtime-request';
import { staticSegments } from '../catalog/static-segments';
import { advertisedEvents } from '../tools';
import type { AgentRunContext } from './run-context';

/** What an agent runtime's request is built from in a worker (a step of its loop, or the compaction barrier's estimate). */
export type AgentRequestSources = Pick<
  AgentRunContext,
  | 'deps'
  | 'job'
  | 'run'
  | 'runtime'
  | 'catalog'
  | 'scope'
  | 'locale'
  | 'languageName'
  | 'world'
  | 'pluginSettings'
  | 'preferences'
  | 'rootSessionId'
  | 'history'
  | 'definitions'
>;

/** The inputs of an agent runtime's request, from the execution as the journal has it now and the history the job read. */
export function agentRequestInputs(
  ctx: AgentRequestSources,
  args: {
    selfData: readonly SelfDataBlock[];
    conversation: readonly ChatMessage[];
    /** A finalizer or emergency step: the runtime's tool definitions are sent with `tool_choice: none`. */
    toolsOff?: boolean;
    /** The token budget of a loop step (the barrier's estimate has none). */
    budget?: RuntimeRequestInputs['budget'];
    /** The execution's mid-turn messages the request includes (a loop step: all it has so far; the barrier's estimate: none). */
    midTurnMessages?: RuntimeRequestInputs['midTurnMessages'];
  },
): RuntimeRequestInputs {
  const { job, runtime, catalog } = ctx;
  const execution = ctx.run.execution;
  return {
    sessionId: job.sessionId,
    ...(ctx.rootSessionId === undefined ? {} : { cacheSessionId: ctx.rootSessionId }),
    locale: ctx.locale,
    ...(ctx.languageName === undefined ? {} : { languageName: ctx.languageName }),
    runtime,
    stageIndex: catalog.stageIndex(runtime),
    history: ctx.history.messages,
    turnNumber: ctx.scope.turnNumber,
    summaries: ctx.history.summaries,
    playerInput: execution.input,
    ...(args.midTurnMessages && args.midTurnMessages.length > 0 ? { midTurnMessages: args.midTurnMessages } : {}),
    outputs: executionOutputs(execution, catalog),
    segments: staticSegments(catalog.plugins, ctx.locale),
    world: ctx.world,
    scanTail: ctx.history.scanTail,
    selfData: args.selfData,
    ...executionRequestInputs(catalog, runtime, execution),
    exports: resolveRuntimeExports({ catalog, runtime, outputs: execution.outputs.values(), history: ctx.history.messages }),
    pluginSettings: ctx.pluginSettings,
    preferences: ctx.preferences,
    lastFormValues: execution.lastFormValues ?? {},
    eventCatalog: advertisedEvents(catalog, runtime),
    loop: { conversation: args.conversation, tools: ctx.definitions, ...(args.toolsOff ? { toolsOff: true } : {}) },
    ...(args.budget ? { budget: args.budget } : {}),
    recentImages: ctx.history.images ?? [],
    ...(ctx.deps.media ? { media: { store: ctx.deps.media, tenantId: job.tenantId } } : {}),
  };
}
