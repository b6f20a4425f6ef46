import { pluginDataAt } from '../plugin-host/journal-plugin-data';
import type { NewEvent } from '../../events';
import type { ToolCall } from '../../providers';
import { emittedEventActivations } from '../activations/activation-events';
import { executionRequestInputs, resolveRuntimeExports } from '../inputs';
import { type ExecutionJournal, outcomeKey, runtimeKey } from '../journal/journal';
import { recordRuntimeOutputLed } from '../execution/record-output';
import { foldLoop } from './completion';
import { toolError, type ToolOutcome } from '../tools';
import { RecordedResolver } from '../plugin-host/resolver';
import { changeEvent } from '../plugin-host/plugin-data-buffer';
import { assetEvents, storeAssets } from '../plugin-host/asset-buffer';
import { NoMediaStoreError } from '../errors';
import type { AgentRunContext } from './run-context';
import { callSuspension, resumedContent, suspensionEvent } from './suspension';
import { ATTR, inSpan, markFailed, recordError, SPAN } from '../../telemetry';

/** What executing a step's tool calls came to: all executed, a tool suspended the runtime, or the last outcome completed it (its output recorded with it). */
export type ToolCallsResult = 'executed' | 'suspended' | 'produced' | 'reused';

/**
 * Executes the tool calls of one step that have no recorded outcome, in the reply's order, through
 * the runtime's ToolSet: `tool.called@1` is recorded before a call runs, then `tool.completed@1`
 * with the outcome and, in the same append, its effects (plugin-data writes, the activations its
 * emitted events start, its generated assets — their bytes stored before), so a crash leaves an outcome with all its effects or neither. An outcome
 * another copy of this job recorded first stands (ours and its effects are dropped). A tool that
 * throws answers the model `TOOL_FAILED` (the ToolSet should not throw; this is the last guard).
 * Nothing runs or is sent between what one append carries, so appends are shared (issue 33):
 * `leading` (the step's `llm.responded@1`, made by the loop right before) goes with the first
 * `tool.called@1`; a call's `tool.completed@1` goes with the next call's `tool.called@1`; and an
 * outcome that completes the runtime (`done`, the last of the step) goes with the runtime's output
 * (and the commit when it is the last), the output's text folded from the journal at that append.
 */
export async function executeToolCalls(
  ctx: AgentRunContext,
  args: { step: number; calls: readonly ToolCall[] },
  leading: readonly NewEvent[] = [],
): Promise<ToolCallsResult> {
  const { job, run, runtime, catalog } = ctx;
  const key = runtimeKey(job.pluginId, job.runtimeId);
  // events made but not appended yet: they go in front of the next append (before anything runs), or alone at the end
  let pending: (current: ExecutionJournal) => NewEvent[] = () => [...leading];
  const take = () => {
    const taken = pending;
    pending = () => [];
    return taken;
  };
  const flush = async () => {
    const taken = take();
    await run.append((current) => taken(current));
  };
  for (const call of args.calls) {
    const recorded = (execution: typeof run.execution) => execution.agentLoops.get(key)?.outcomes.has(outcomeKey(args.step, call.id)) ?? false;
    if (recorded(run.execution)) continue;
    const ref = {
      executionId: job.executionId,
      turnId: run.execution.turnId,
      attempt: job.attempt,
      pluginId: job.pluginId,
      runtimeId: runtime.runtimeId,
      step: args.step,
      toolCallId: call.id,
      name: call.name,
    };
    // a call its tool suspended on: waiting until a resume, whose payload is then its result
    const suspended = callSuspension(run.execution, ref);
    if (suspended) {
      if (!suspended.resumed) {
        await flush();
        return 'suspended';
      }
      const content = resumedContent(suspended.resumed.payload);
      const before = take();
      await run.append((current) => [
        ...before(current),
        ...(recorded(current) ? [] : [{ type: 'tool.completed@1' as const, data: { ...ref, content, ok: true } }]),
      ]);
      continue;
    }
    const before = take();
    await run.append((current) => [...before(current), { type: 'tool.called@1', data: { ...ref, arguments: JSON.stringify(call.arguments ?? {}) } }]);
    const execution = run.execution;
    const outcome = await executeOne(ctx, call, {
      catalog,
      runtime,
      execution,
      scope: ctx.scope,
      inputSlots: executionRequestInputs(catalog, runtime, execution).inputs,
      exports: resolveRuntimeExports({ catalog, runtime, outputs: execution.outputs.values(), history: ctx.history.messages }),
      emittedTopics: execution.emittedTopics,
      // plugin data as the shared journal sees it: reads its siblings made at the same version are answered once
      pluginData: pluginDataAt(ctx.deps.pluginData, run.journal),
      // the world the step's request saw: its recorded session.world-context@1 results, no handler run again
      plugins: { registry: catalog.host.registry, resolver: new RecordedResolver(job.executionId, execution.extensionResults) },
    });
    // the bytes first: the event that references them is appended only after they are stored
    const assets = outcome.ok ? (outcome.assets ?? []) : [];
    if (assets.length > 0) {
      if (!ctx.deps.media) throw new NoMediaStoreError(job.pluginId);
      await storeAssets(ctx.deps.media, { tenantId: job.tenantId, sessionId: job.sessionId }, assets);
    }
    // a copy of this job recorded first: its outcome (or suspension) and effects stand
    const outcomeEvents = (current: ExecutionJournal): NewEvent[] => {
      if (recorded(current) || callSuspension(current, ref)) return [];
      const data = { executionId: ref.executionId, turnId: ref.turnId, attempt: ref.attempt, pluginId: outcome.changesPluginId ?? ref.pluginId };
      return [
        outcome.suspend
          ? suspensionEvent({ ref, execution: current, runtime, catalog, waitingFor: outcome.suspend.waitingFor })
          : {
              type: 'tool.completed@1',
              data: {
                ...ref,
                content: outcome.content,
                ok: outcome.ok,
                ...(outcome.errorCode !== undefined ? { errorCode: outcome.errorCode } : {}),
                ...(outcome.done ? { done: true } : {}),
                ...(outcome.emissions.length > 0 ? { emittedTopics: outcome.emissions.map((e) => e.topic) } : {}),
              },
            },
        ...outcome.changes.map((c) => changeEvent(data, c)),
        // each emitted event starts its followers as activations, pending after this execution
        ...outcome.emissions.flatMap((e) => emittedEventActivations(catalog, e).events),
        ...assetEvents(
          {
            executionId: ref.executionId,
            turnId: ref.turnId,
            attempt: ref.attempt,
            pluginId: ref.pluginId,
            runtimeId: ref.runtimeId,
            step: ref.step,
            toolCallId: ref.toolCallId,
          },
          ctx.scope.locale,
          assets,
        ),
      ];
    };
    if (outcome.suspend) {
      await run.append(outcomeEvents);
      return 'suspended'; // the runtime waits; the calls after this one run after the resume
    }
    // the loop's next decision, as it will fold the journal once this outcome is recorded
    const completion = (current: ExecutionJournal) => {
      const record = current.agentLoops.get(key);
      const outcomes = new Map(record?.outcomes).set(outcomeKey(args.step, call.id), {
        step: args.step,
        toolCallId: call.id,
        name: call.name,
        content: outcome.content,
        ok: outcome.ok,
        ...(outcome.done ? { done: true } : {}),
      });
      const next = foldLoop({ policy: ctx.policy, locale: ctx.locale, record: { replies: record?.replies ?? new Map(), outcomes } }).next;
      return next.kind === 'complete' ? next.text : undefined;
    };
    // the outcome completes the runtime (and the run was not stopped meanwhile): recorded with the output, in one append
    if (completion(run.execution) !== undefined && !ctx.ended?.aborted && !ctx.turnDeadline?.signal.aborted) {
      const result = await recordRuntimeOutputLed({
        deps: ctx.deps,
        job,
        run,
        runtime,
        catalog,
        lead: (current) => {
          const events = outcomeEvents(current);
          const text = events.length > 0 ? completion(current) : undefined;
          return text === undefined ? undefined : { events, text };
        },
      });
      // declined: a copy of this job recorded this outcome first; the loop goes on from what it recorded
      return result === 'declined' ? 'executed' : result;
    }
    pending = outcomeEvents;
  }
  await flush();
  return 'executed';
}

function executeOne(ctx: AgentRunContext, call: ToolCall, context: Parameters<AgentRunContext['tools']['execute']>[1]): Promise<ToolOutcome> {
  return inSpan(SPAN.toolCall, { attributes: { [ATTR.toolName]: call.name, [ATTR.toolCallId]: call.id } }, async (span) => {
    let outcome: ToolOutcome;
    try {
      outcome = await ctx.tools.execute(call, context);
    } catch (error) {
      recordError(span, error);
      // the same envelope the tool set answers with (`{ "ok": false, "error": … }`)
      outcome = toolError('TOOL_FAILED', `tool "${call.name}" failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    span.setAttribute(ATTR.toolOk, outcome.ok);
    if (!outcome.ok) {
      if (outcome.errorCode !== undefined) span.setAttribute(ATTR.toolErrorCode, outcome.errorCode);
      markFailed(span, outcome.errorCode ?? 'tool error');
    }
    return outcome;
  });
}
