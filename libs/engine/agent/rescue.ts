import type { NewEvent } from '../../events';
import type { ChatMessage } from '../../providers';
import { ContextOverflowError } from '../budget';
import { runtimeKey } from '../journal/journal';
import { foldLoop } from './completion';
import type { AgentFailure, AgentLoopError } from './errors';
import { finalizeRuntime } from './finalization';
import { finalizerPrompt, hasCompleteToolGroup } from './finalizer';
import type { AgentRunContext } from './run-context';

/**
 * Spec §5 "Still over the limit": a step whose request overflowed sent nothing. With
 * `finalizer.maxSteps` and at least one complete tool group in its conversation, the same step is
 * tried once more with tools off in emergency mode (the budget may elide or collapse the newest
 * groups too), asking for the final answer: a reply that completes the runtime (the same text rules
 * as any step) is its output. Otherwise, or when that request overflows as well, the original
 * overflow text is the runtime's `context-overflow` failure (a reply that did not complete is
 * recorded first). A finalizer step's own overflow is not rescued.
 */
export async function rescue(
  ctx: AgentRunContext,
  args: {
    step: number;
    conversation: readonly ChatMessage[];
    overflow: ContextOverflowError;
    send: (mode: 'emergency', conversation: readonly ChatMessage[]) => Promise<{ reply: string; responded: NewEvent }>;
    fail: (failure: AgentFailure, detail: string) => AgentLoopError;
  },
): Promise<'produced' | 'reused'> {
  const failure = args.fail('context-overflow', args.overflow.text);
  const normal = args.step <= ctx.policy.maxSteps;
  if (!normal || ctx.policy.finalizerSteps <= 0 || !hasCompleteToolGroup(args.conversation)) throw failure;
  let sent: { reply: string; responded: NewEvent };
  try {
    sent = await args.send('emergency', [...args.conversation, finalizerPrompt(ctx.locale)]);
  } catch (error) {
    throw error instanceof ContextOverflowError ? failure : error;
  }
  const key = runtimeKey(ctx.job.pluginId, ctx.job.runtimeId);
  const record = ctx.run.execution.agentLoops.get(key);
  const withReply = {
    replies: new Map(record?.replies).set(args.step, { step: args.step, reply: sent.reply }),
    outcomes: record?.outcomes ?? new Map(),
  };
  const after = foldLoop({ policy: ctx.policy, locale: ctx.locale, record: withReply }).next;
  if (after.kind === 'complete') return finalizeRuntime(ctx, after.text, [sent.responded]);
  await ctx.run.append(() => [sent.responded]);
  throw failure;
}
