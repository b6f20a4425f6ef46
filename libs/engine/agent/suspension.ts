import type { ContextMessage } from '../../context';
import type { EventData, NewEvent } from '../../events';
import { executionRequestInputs, runtimeContinuation } from '../inputs';
import type { ExecutionJournal, ExecutionSuspension } from '../journal/journal';
import type { CatalogRuntime, RuntimeCatalog } from '../catalog/runtime-catalog';
import { toolSuccess } from '../tools';

type CallRef = Omit<EventData<'execution.suspended@1'>, 'currentTurnUserMessages' | 'inputs' | 'waitingFor'>;

/**
 * The step of the runtime's latest resumed suspension (its ledger starts again after it, spec §5
 * "Resume starts a new ledger"), as the journal stands; none before a resume.
 */
export function resumedStep(execution: ExecutionJournal, runtime: Pick<CatalogRuntime, 'pluginId' | 'runtimeId'>): number | undefined {
  const continuation = runtimeContinuation(execution, runtime);
  return continuation?.resumed ? continuation.step : undefined;
}

/**
 * The protected range of the current turn as the runtime's requests had it (spec §1): the player's
 * input, then the messages the player inserted mid-turn. A runtime already resumed once keeps its
 * saved range.
 */
function currentTurnUserMessages(execution: ExecutionJournal, runtime: CatalogRuntime, catalog: RuntimeCatalog): ContextMessage[] {
  const saved = executionRequestInputs(catalog, runtime, execution).resume;
  if (saved) return saved.currentTurnUserMessages;
  // the player's input and the mid-turn messages the execution holds when it suspends, in order
  return [{ role: 'user', content: execution.input.text }, ...execution.midTurnMessages.map((m): ContextMessage => ({ role: 'user', content: m.text }))];
}

/**
 * `execution.suspended@1` for a tool call whose tool returned `ctx.suspend`: the continuation (the
 * protected range, the input slots the runtime had, frozen) and what the execution waits for.
 */
export function suspensionEvent(args: {
  ref: CallRef;
  execution: ExecutionJournal;
  runtime: CatalogRuntime;
  catalog: RuntimeCatalog;
  waitingFor: EventData<'execution.suspended@1'>['waitingFor'];
}): NewEvent {
  const { inputs } = executionRequestInputs(args.catalog, args.runtime, args.execution);
  return {
    type: 'execution.suspended@1',
    data: {
      ...args.ref,
      currentTurnUserMessages: currentTurnUserMessages(args.execution, args.runtime, args.catalog).map((m) => ({ role: m.role, content: m.content })),
      inputs: JSON.parse(JSON.stringify(inputs)) as EventData<'execution.suspended@1'>['inputs'],
      waitingFor: args.waitingFor,
    },
  };
}

/** The suspension of this tool call, if its tool suspended the runtime. */
export function callSuspension(
  execution: ExecutionJournal,
  ref: { pluginId: string; runtimeId: string; step: number; toolCallId: string },
): ExecutionSuspension | undefined {
  return execution.suspensions.find(
    (s) => s.pluginId === ref.pluginId && s.runtimeId === ref.runtimeId && s.step === ref.step && s.toolCallId === ref.toolCallId,
  );
}

/** The result the model reads for a resumed call: the resume's payload, as a tool's success (`{ "ok": true, "data": payload }`). */
export const resumedContent = (payload: unknown): string => toolSuccess(payload).content;
