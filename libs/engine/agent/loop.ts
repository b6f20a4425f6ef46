import { runtimeKey } from '../journal/journal';
import type { TurnDeps } from '../execution/deps';
import { ContextOverflowError } from '../budget';
import { rescue } from './rescue';
import { type ChatMessage, linkedSignal } from '../../providers';
import { foldLoop } from './completion';
import { AgentLoopError } from './errors';
import { FencedOutError } from '../errors';
import { finalizeRuntime } from './finalization';
import { toolSetOf } from '../tools';
import { agentPolicy } from './policy';
import type { AgentRunContext } from './run-context';
import { runModelStep } from './step';
import { executeToolCalls } from './tool-driver';

/** What a runtime step gives the loop: its run context without what the loop derives (policy, tools). */
export type AgentLoopArgs = Omit<AgentRunContext, 'deps' | 'policy' | 'tools' | 'definitions'>;

/**
 * The loop of one `type: agent` runtime in one job: what to do next is always derived from what the
 * execution recorded for this runtime (`foldLoop` over the journal, the same fold a rebuild reads),
 * so a job that resumes a loop an earlier attempt left never sends a recorded call again nor
 * executes a recorded tool call again: send a step, execute its tool calls, send the next step with
 * their results, until the completion rules complete the runtime (its output recorded, the turn
 * committed when it was the last) or fail it (`AgentLoopError`, permanent), or until a tool suspends
 * it (`suspended`: the job ends; `POST /v1/executions/:id/resume` starts a new attempt that goes on
 * from the log, the resume's payload as the call's result). The step limit counts
 * recorded steps; the deadline (`agent.loop.timeoutMs`) runs from this job's start.
 */
export async function runAgentLoop(deps: TurnDeps, args: AgentLoopArgs): Promise<'produced' | 'reused' | 'suspended'> {
  const policy = agentPolicy(args.runtime);
  const tools = toolSetOf(deps);
  const ctx: AgentRunContext = {
    deps,
    ...args,
    policy,
    tools,
    definitions: tools.definitions(args.runtime, args.catalog),
  };
  const key = runtimeKey(args.job.pluginId, args.job.runtimeId);
  const deadline = policy.timeoutMs !== undefined ? Date.now() + policy.timeoutMs : undefined;
  const fail = (failure: AgentLoopError['failure'], detail: string) =>
    new AgentLoopError({ failure, pluginId: args.job.pluginId, runtimeId: args.runtime.runtimeId, detail });
  for (;;) {
    if (args.ended?.aborted) throw new FencedOutError(args.job.executionId, args.job.attempt);
    if (args.turnDeadline?.signal.aborted) throw args.turnDeadline.signal.reason;
    const execution = args.run.execution;
    if (execution.outputs.has(key)) return 'reused';
    const { conversation, next } = foldLoop({ policy, locale: args.locale, record: execution.agentLoops.get(key) });
    if (next.kind === 'complete') return finalizeRuntime(ctx, next.text);
    if (next.kind === 'fail') throw fail(next.failure, next.detail);
    if (deadline !== undefined && Date.now() >= deadline) throw fail('timeout', `did not complete within ${policy.timeoutMs} ms`);
    if (next.kind === 'execute') {
      // a tool suspended the runtime (the job ends, nothing retries it), or the last outcome completed it
      const executed = await executeToolCalls(ctx, next);
      if (executed !== 'executed') return executed;
    } else {
      const timeout = deadline !== undefined ? AbortSignal.timeout(Math.max(1, deadline - Date.now())) : undefined;
      // the call is aborted at the deadline, at the turn's deadline, or when the execution ends elsewhere (a cancel)
      args.turnDeadline?.arm(); // the turn's clock runs from this attempt's first model call
      const signals = [timeout, args.ended, args.turnDeadline?.signal].filter((s): s is AbortSignal => s !== undefined);
      // linked, not `AbortSignal.any` (its weak links cost ~30-100 µs a signal): unlinked once the step is sent
      const linked = signals.length > 1 ? linkedSignal(signals) : undefined;
      const signal = linked?.signal ?? signals[0];
      const send = (mode: 'normal' | 'finalizer' | 'emergency', messages: readonly ChatMessage[]) =>
        runModelStep(ctx, { step: next.step, conversation: messages, mode, ...(signal ? { signal } : {}) });
      let sent: Awaited<ReturnType<typeof runModelStep>>;
      try {
        sent = await send(next.mode ?? 'normal', conversation);
      } catch (error) {
        if (args.ended?.aborted) throw new FencedOutError(args.job.executionId, args.job.attempt);
        if (args.turnDeadline?.signal.aborted) throw args.turnDeadline.signal.reason;
        if (timeout?.aborted) throw fail('timeout', `did not complete within ${policy.timeoutMs} ms`);
        // spec §5: still over the input limit after trimming: nothing was sent; the finalizer may rescue it once
        if (error instanceof ContextOverflowError) return await rescue(ctx, { step: next.step, conversation, overflow: error, send, fail });
        throw error;
      } finally {
        linked?.release();
      }
      // a reply that completes the runtime is recorded with the output (and the commit) in one append
      const record = execution.agentLoops.get(key);
      const withReply = {
        replies: new Map(record?.replies).set(next.step, { step: next.step, reply: sent.reply }),
        outcomes: record?.outcomes ?? new Map(),
      };
      const after = foldLoop({ policy, locale: args.locale, record: withReply }).next;
      if (after.kind === 'complete') return finalizeRuntime(ctx, after.text, [sent.responded]);
      // a reply with tool calls is recorded with the first call's tool.called@1 (one append, before
      // the tool runs: nothing runs between them), unless the loop would stop before executing them
      const stopped =
        args.ended?.aborted || args.turnDeadline?.signal.aborted || (deadline !== undefined && Date.now() >= deadline) || args.run.execution.outputs.has(key);
      if (after.kind === 'execute' && !stopped) {
        const executed = await executeToolCalls(ctx, after, [sent.responded]);
        if (executed !== 'executed') return executed;
        continue;
      }
      await args.run.append(() => [sent.responded]);
    }
  }
}
