import { randomUUID } from 'node:crypto';
import type { NewEvent } from '../../events';
import type { ChatMessage } from '../../providers';
import { redactImageData } from '../../providers';
import { LiveResolver } from '../plugin-host/resolver';
import { resolvedEvents } from '../plugin-host/resolved-events';
import { storePluginData } from '../plugin-host/store-plugin-data';
import { pluginDataAt } from '../plugin-host/journal-plugin-data';
import type { BudgetMode } from '../../context';
import { runLedger } from '../budget';
import { runtimeKey } from '../journal/journal';
import { addToLogScope } from '../logging';
import { buildRuntimeRequest } from '../request/runtime-request';
import { workerAssemblies } from '../request/assembly-reuse';
import { readSelfData, selfDataUnchanged } from '../request/self-data';
import { historyUnchanged } from '../history/history-loader';
import { agentRequestInputs } from './request-inputs';
import { resumedStep } from './suspension';
import { recordReply } from './reply';
import { sendWithFallback } from './stream-fallback';
import { timedAdapter } from '../metrics';
import type { AgentRunContext } from './run-context';

/**
 * One model call of an agent loop: builds the step's request from the log's state (the runtime's
 * request, then the conversation the earlier steps recorded, then the PreLLMCall hooks, which run
 * before every call), records `llm.calling@1` with the handler results it used (one append, before
 * the call), sends it (a streamed step the provider refuses, or whose stream breaks before any
 * text, once more without streaming: `sendWithFallback`), and resolves to its `llm.responded@1`
 * (for the call that answered) with the reply (text, tool calls, carried reasoning/continuations),
 * which a resumed loop and a rebuild read instead of calling again; the loop appends it (with the
 * output and the commit when the reply completes the runtime).
 */
export async function runModelStep(
  ctx: AgentRunContext,
  args: {
    step: number;
    conversation: readonly ChatMessage[];
    /** `finalizer` / `emergency`: a step with tools off (spec §5); default `normal`. */
    mode?: BudgetMode;
    signal?: AbortSignal;
  },
): Promise<{ reply: string; responded: NewEvent }> {
  const { deps, job, run, runtime, catalog } = ctx;
  const m = runtime.manifest;
  // what the log holds now: a message the player added to the turn meanwhile reaches this call
  const execution = await run.refresh();
  // the mid-turn messages this request includes (recorded with the call: a rebuild includes exactly these)
  const midTurnMessages = [...execution.midTurnMessages];
  // the plugin data version the selfData read saw at the latest: the call is not recorded if it moved
  const dataVersion = run.journal.pluginDataVersion;
  // reads at the journal's plugin-data version its siblings (and this run's earlier steps) made are answered once
  const pluginData = pluginDataAt(deps.pluginData, run.journal);
  const selfData = await readSelfData(pluginData, { tenantId: job.tenantId, sessionId: job.sessionId, pluginId: job.pluginId }, m.io.selfData);
  // results this execution recorded already are reused; a handler runs only for a new input
  const resolver = new LiveResolver(execution.extensionResults, catalog.host.invoker(ctx.scope, storePluginData(pluginData)));
  const mode = args.mode ?? 'normal';
  // the run's ledger as its earlier steps recorded it (spec §5): a ContextOverflowError stops the step before anything is recorded or sent
  const ledger = runLedger(execution.agentLoops.get(runtimeKey(job.pluginId, runtime.runtimeId))?.ledgers, args.step, resumedStep(execution, runtime));
  const { body, slot, adapter, call, budget, layout } = await buildRuntimeRequest(
    agentRequestInputs(ctx, {
      selfData,
      conversation: args.conversation,
      budget: { ledger, mode },
      midTurnMessages,
      ...(mode === 'normal' ? {} : { toolsOff: true }),
    }),
    deps.providers,
    { registry: catalog.host.registry, resolver },
    // the barrier's estimate or an earlier step assembled the same params: that context is taken again
    { assemblies: workerAssemblies },
  );
  const ids = { executionId: job.executionId, turnId: execution.turnId, pluginId: job.pluginId, runtimeId: runtime.runtimeId };
  // the body's trace text (its images' bytes redacted), made once: a body without images is sent as these bytes too (`SendOptions.json`)
  const traced = redactImageData(body);
  const bodyText = JSON.stringify(traced);
  const calling = (callId: string, sent: string, fallback?: 'non-streaming'): NewEvent => ({
    type: 'llm.calling@1',
    data: {
      ...ids,
      callId,
      attempt: job.attempt,
      provider: adapter.protocol,
      model: slot.model,
      step: args.step,
      body: sent,
      layout,
      ...(fallback ? { fallback } : {}),
      ...(budget ? { budget } : {}),
      ...(execution.retryFromTurnId !== undefined ? { retryFromTurnId: execution.retryFromTurnId } : {}),
      ...(midTurnMessages.length > 0 ? { midTurnMessages: midTurnMessages.length } : {}),
    },
  });
  // neither the plugin data nor the history the request was built from moved before it is recorded
  const unchanged = () => [
    ...selfDataUnchanged(run.journal, { job, read: selfData.length > 0, dataVersion }),
    ...historyUnchanged(run.journal, { job, historyVersion: ctx.historyVersion }),
  ];
  const callId = randomUUID();
  await run.append((current) => [
    ...unchanged(),
    // recorded with the call that used them (one append, before the call); a result another job of
    // the execution recorded first is kept, one that differs from ours: not sent, tried again
    ...resolvedEvents(resolver.fresh, current, job.attempt),
    calling(callId, bodyText),
  ]);
  addToLogScope({ callId }); // recorded: the job's later lines (its failure too) name the call
  // the story text as it streams, for the session's event stream (transient: the reply is recorded whole)
  const live = deps.deltas?.open({ sessionId: job.sessionId, callId });
  const onText = live ? (text: string) => live.write(text) : undefined;
  // a streamed step the provider refuses (or whose stream breaks before any text) goes once more without streaming, recorded first
  // in flight: the stage's groups of appends do not wait for this run's next one meanwhile (`ExecutionRun.sending`)
  const sent = await run
    .sending(
      sendWithFallback({
        adapter: timedAdapter(deps.metrics, adapter, slot.model),
        call,
        body,
        ...(traced === body ? { json: bodyText } : {}),
        callId,
        ...(args.signal ? { signal: args.signal } : {}),
        ...(onText ? { onText } : {}),
        // the fallback carries the same selfData: recorded only while the log's plugin data is still what was read
        record: async (fallback) => {
          addToLogScope({ callId: fallback.callId });
          await run.append(() => [...unchanged(), calling(fallback.callId, JSON.stringify(redactImageData(fallback.body)), 'non-streaming')]);
        },
      }),
    )
    .finally(() => live?.end()); // its last delta goes before the reply is recorded
  const response = sent.response;
  const reply = recordReply(response);
  return {
    reply,
    responded: {
      type: 'llm.responded@1',
      data: { ...ids, callId: sent.callId, finishReason: response.finishReason, usage: response.usage, step: args.step, reply },
    },
  };
}
