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
import type { AgentRunContext } from './run-context';

/**
 * One model call of an agent loop: builds the step's request from the log's state (the runtime's
 * request, then the conversation the earlier steps recorded, then the PreLLMCall hooks, which run
 * before every call), records `llm.calling@1` with the handler results it used (one append, before
 * the call), sends it, and resolves to its `llm.responded@1` with the reply (text, tool calls,
 * carried reasoning/continuations), which a resumed loop and a rebuild read instead of calling
 * again; the loop appends it (with the output and the commit when the reply completes the runtime).
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
  const { body, slot, adapter, context } = await buildRuntimeRequest(
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
  const ids = { executionId: job.executionId, turnId: execution.turnId, callId: randomUUID(), pluginId: job.pluginId, runtimeId: runtime.runtimeId };
  const recorded = JSON.stringify(redactImageData(body));
  await run.append((current) => [
    ...selfDataUnchanged(run.journal, { job, read: selfData.length > 0, dataVersion }),
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
    {
      type: 'llm.calling@1',
      data: { ...ids, attempt: job.attempt, provider: adapter.protocol, model: slot.model, step: args.step, body: recorded, layout: requestLayout(context) },
    },
  ]);
  const response = await adapter.send(body, args.signal ? { signal: args.signal } : undefined);
  const reply = recordReply(response);
  return {
    reply,
    responded: { type: 'llm.responded@1', data: { ...ids, finishReason: response.finishReason, usage: response.usage, step: args.step, reply } },
  };
}
