import { fixedText } from '../../context';
import type { Locale } from '../../plugins-sdk';
import type { ChatMessage, ToolCall } from '../../providers';
import { type AgentLoopRecord, outcomeKey } from '../journal/journal';
import type { AgentFailure } from './errors';
import { callSignature, repeatedCalls } from './loop-detection';
import { validateOutput } from './output-validation';
import type { AgentPolicy } from './policy';
import { finalizerPrompt } from './finalizer';
import { assistantMessage, parseReply } from './reply';

/** What a runtime's loop does next, given what it recorded. */
export type LoopNext =
  /** `finalizer`: a step after the step limit, with tools off (manifest `finalizer.maxSteps`). */
  | { kind: 'send'; step: number; mode?: 'finalizer' }
  /** Tool calls of `step` without a recorded outcome, in the reply's order. */
  | { kind: 'execute'; step: number; calls: ToolCall[] }
  | { kind: 'complete'; text: string }
  | { kind: 'fail'; failure: AgentFailure; detail: string };

export interface LoopState {
  /** The messages the loop adds after the runtime's request messages (the next step's conversation). */
  conversation: ChatMessage[];
  next: LoopNext;
}

/**
 * The completion rules, as a fold over the recorded steps of one runtime's loop (pure: the worker
 * resuming a loop and a rebuild read the same records the same way). Each recorded reply, in step
 * order, either completes the runtime, fails it, or adds to the conversation of the next step:
 * - tool calls: the assistant message, then one tool result per call (recorded outcomes; missing
 *   ones are executed next); a call repeating an earlier one (same name and arguments) gets one
 *   nudge after its results, a repeat after the nudge fails the runtime; `runtime-done` accepted
 *   (`done`) completes it (under an output schema the completing tool's content is the output);
 * - a bare text finish: under `requireToolUse` with no tool called, one corrective nudge, then a
 *   failure; under an output schema the schema gate: the JSON output completes, prose or JSON the
 *   schema refuses gets a `[retry N]` hint up to the limit, then fails (keeping the raw output);
 *   any other text completes the runtime (a story runtime's story text).
 * After the step limit, a runtime with `finalizer.maxSteps` gets that many more steps with tools off:
 * the finalizer prompt once before the first of them, then each reply's text goes through the same
 * text rules (tool calls it made anyway are not executed); when they run out: `max-steps`.
 * `upTo`: stop before that step (the conversation its request was built with).
 */
export function foldLoop(args: { policy: AgentPolicy; locale: Locale; record: AgentLoopRecord | undefined; upTo?: number }): LoopState {
  const { policy, record } = args;
  const t = fixedText(args.locale);
  const conversation: ChatMessage[] = [];
  const seen = new Set<string>();
  let toolsUsed = false;
  let toolUseNudged = false;
  let loopNudged = false;
  let retries = 0;
  for (let step = 1; ; step++) {
    const finalizing = step > policy.maxSteps;
    if (finalizing && step === policy.maxSteps + 1 && policy.finalizerSteps > 0) conversation.push(finalizerPrompt(args.locale));
    const recorded = step === args.upTo ? undefined : record?.replies.get(step);
    if (!recorded) {
      if (step > policy.maxSteps + policy.finalizerSteps) return { conversation, next: fail('max-steps', `did not complete within ${policy.maxSteps} steps`) };
      return { conversation, next: finalizing ? { kind: 'send', step, mode: 'finalizer' } : { kind: 'send', step } };
    }
    const parsed = parseReply(recorded.reply);
    // a finalizer step has no tools: calls it made anyway are not executed, its text is its answer
    const reply = finalizing ? { ...parsed, toolCalls: [] } : parsed;
    const calls = reply.toolCalls;
    if (calls.length > 0) {
      const repeats = repeatedCalls(calls, seen);
      if (repeats.length > 0 && loopNudged)
        return { conversation, next: fail('repeated-call', `repeated the tool call ${repeats[0].name} after the loop nudge`) };
      const missing = calls.filter((c) => !record?.outcomes.has(outcomeKey(step, c.id)));
      if (missing.length > 0) return { conversation, next: { kind: 'execute', step, calls: missing } };
      conversation.push(assistantMessage(reply));
      let done: string | undefined;
      for (const call of calls) {
        const outcome = record!.outcomes.get(outcomeKey(step, call.id))!;
        conversation.push({ role: 'tool', content: outcome.content, toolCallId: call.id, toolName: call.name });
        if (outcome.done && done === undefined) done = outcome.content;
        seen.add(callSignature(call));
      }
      toolsUsed = true;
      if (done !== undefined) return { conversation, next: { kind: 'complete', text: completingToolOutput(policy, done) } };
      if (repeats.length > 0) {
        loopNudged = true;
        conversation.push({ role: 'user', content: t.loopNudge });
      }
      continue;
    }
    if (policy.requireToolUse && !toolsUsed && !finalizing) {
      if (toolUseNudged) return { conversation, next: fail('tool-use-required', 'ended without calling a tool after the corrective nudge') };
      toolUseNudged = true;
      conversation.push(assistantMessage(reply), { role: 'user', content: t.toolUseNudge });
      continue;
    }
    if (policy.completion === 'schema' && policy.schema) {
      const verdict = validateOutput(reply.text, policy.schema);
      if (verdict.ok) return { conversation, next: { kind: 'complete', text: verdict.json } };
      if (retries >= policy.maxSchemaRetries)
        return {
          conversation,
          next: fail(
            'invalid-output',
            `output failed the output schema after ${retries} retries (${verdict.problems}); raw output: ${JSON.stringify(reply.text)}`,
          ),
        };
      retries++;
      conversation.push(assistantMessage(reply), {
        role: 'user',
        content: verdict.notJson ? t.retryNotJson(retries) : t.retrySchema(retries, verdict.problems),
      });
      continue;
    }
    return { conversation, next: { kind: 'complete', text: reply.text } };
  }
}

/** Under an output schema, a completing tool's content is the output when the schema accepts it; otherwise the output is empty. */
function completingToolOutput(policy: AgentPolicy, content: string): string {
  if (policy.completion !== 'schema' || !policy.schema) return '';
  const verdict = validateOutput(content, policy.schema);
  return verdict.ok ? verdict.json : '';
}

function fail(failure: AgentFailure, detail: string): LoopNext {
  return { kind: 'fail', failure, detail };
}
