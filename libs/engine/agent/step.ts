import { randomUUID } from 'node:crypto';
import type { NewEvent } from '../../events';
import type { ChatMessage } from '../../providers';
import { redactImageData } from '../../providers';
import { ExtensionResultRaceError } from '../errors';
import { executionOutputs } from '../journal';
import { executionRequestInputs } from '../inputs';
import { LiveResolver } from '../plugin-host/resolver';
import { storePluginData } from '../plugin-host/store-plugin-data';
import { buildRuntimeRequest, requestLayout } from '../runtime-request';
import { readSelfData, selfDataUnchanged } from '../self-data';
import { staticSegments } from '../static-segments';
import { advertisedEvents } from '../tools';
import { recordReply } from './reply';
import { sendWithFallback } from './stream-fallback';
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
  args: { step: number; conversation: readonly ChatMessage[]; signal?: AbortSignal },
): Promise<{ reply: string; responded: NewEvent }> {
  const { deps, job, run, runtime, catalog } = ctx;
  const m = runtime.manifest;
  const execution = run.execution;
  // the plugin data version the selfData read saw at the latest: the call is not recorded if it moved
  const dataVersion = run.journal.pluginDataVersion;
  const selfData = await readSelfData(deps.pluginData, { tenantId: job.tenantId, sessionId: job.sessionId, pluginId: job.pluginId }, m.io.selfData);
  // results this execution recorded already are reused; a handler runs only for a new input
  const resolver = new LiveResolver(execution.extensionResults, catalog.host.invoker(ctx.scope, storePluginData(deps.pluginData)));
  const { body, slot, adapter, context, call } = await buildRuntimeRequest(
    {
      sessionId: job.sessionId,
      locale: ctx.locale,
      runtime,
      stageIndex: catalog.stageIndex(runtime),
      history: ctx.history.messages,
      summaries: ctx.history.summaries,
      playerInput: execution.input,
      outputs: executionOutputs(execution, catalog),
      segments: staticSegments(catalog.plugins, ctx.locale),
      world: ctx.world,
      scanTail: ctx.history.scanTail,
      selfData,
      ...executionRequestInputs(catalog, runtime, execution),
      pluginSettings: ctx.pluginSettings,
      lastFormValues: execution.lastFormValues ?? {},
      eventCatalog: advertisedEvents(catalog, runtime),
      loop: { conversation: args.conversation, tools: ctx.definitions },
      recentImages: ctx.history.images ?? [],
      ...(deps.media ? { media: { store: deps.media, tenantId: job.tenantId } } : {}),
    },
    deps.providers,
    { registry: catalog.host.registry, resolver },
  );
  const ids = { executionId: job.executionId, turnId: execution.turnId, pluginId: job.pluginId, runtimeId: runtime.runtimeId };
  const calling = (callId: string, sent: Record<string, unknown>, fallback?: 'non-streaming'): NewEvent => ({
    type: 'llm.calling@1',
    data: {
      ...ids,
      callId,
      attempt: job.attempt,
      provider: adapter.protocol,
      model: slot.model,
      step: args.step,
      body: JSON.stringify(redactImageData(sent)),
      layout: requestLayout(context),
      ...(fallback ? { fallback } : {}),
    },
  });
  const unchanged = () => selfDataUnchanged(run.journal, { job, read: selfData.length > 0, dataVersion });
  const callId = randomUUID();
  await run.append((current) => [
    ...unchanged(),
    // recorded with the call that used them (one append, before the call); a result another job of
    // the execution recorded first (a copy of this job, a lost lock) is kept, and when it differs
    // from ours this request is not what the log would rebuild: not sent, the job is tried again
    ...resolver.fresh
      .map((r) => {
        const first = current.extensionResults.get(r.key);
        if (first !== undefined && first !== r.result)
          throw new ExtensionResultRaceError({ executionId: job.executionId, pluginId: r.pluginId, point: r.point, extensionId: r.extensionId });
        return r;
      })
      .filter((r) => !current.extensionResults.has(r.key))
      .map((r) => ({
        type: 'extension.resolved@1' as const,
        data: {
          executionId: ids.executionId,
          turnId: ids.turnId,
          attempt: job.attempt,
          point: r.point,
          pluginId: r.pluginId,
          extensionId: r.extensionId,
          inputHash: r.inputHash,
          result: r.result,
        },
      })),
    calling(callId, body),
  ]);
  // a streamed step the provider refuses (or whose stream breaks before any text) goes once more without streaming, recorded first
  const sent = await sendWithFallback({
    adapter,
    call,
    body,
    callId,
    ...(args.signal ? { signal: args.signal } : {}),
    // the fallback carries the same selfData: recorded only while the log's plugin data is still what was read
    record: async (fallback) => {
      await run.append(() => [...unchanged(), calling(fallback.callId, fallback.body, 'non-streaming')]);
    },
  });
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
