import { z } from 'zod';
import type { EmulatorScript } from './emulator-server';

/**
 * A world's reply book for the offline emulator (`worlds/<id>/emulator-replies.json`): the emulator
 * cannot invent meaningful bookkeeping (its own answer to a forced tool is the smallest valid
 * arguments, e.g. "no change"), so a world may say which tool call the emulated model makes when
 * the player's words name something. Only the emulator reads it; a real model never sees it.
 */
export const ReplyBookRule = z
  .object({
    /** The tool the emulated model calls (only when the request offers it and does not turn tools off). */
    tool: z.string().min(1),
    /** The call is made when the last user message contains one of these (case-insensitive). */
    whenPlayerSays: z.array(z.string().min(1)).min(1),
    /** The call's arguments (the plugin's tool validates them like any model's). */
    args: z.record(z.string(), z.unknown()),
  })
  .strict();
export type ReplyBookRule = z.infer<typeof ReplyBookRule>;

export const ReplyBook = z.object({ $comment: z.string().optional(), tools: z.array(ReplyBookRule) }).strict();
export type ReplyBook = z.infer<typeof ReplyBook>;

/**
 * The user text of this turn, lower case: the user messages after the turn context (the first
 * system message after the system prompt; what follows it is this turn: the player's input, the
 * story text, the fixed ending hint, lorebook insertions), so a bookkeeper's request is matched on
 * the player's words, not on its last user message (the ending hint). Without a turn context, the
 * last user message.
 */
function thisTurnsWords(transcript: readonly { role: string; content: string }[]): string {
  const turnContext = transcript.findIndex((m, i) => i > 0 && m.role === 'system');
  if (turnContext > 0)
    return transcript
      .filter((m, i) => i > turnContext && m.role === 'user')
      .map((m) => m.content)
      .join('\n')
      .toLowerCase();
  return ([...transcript].reverse().find((m) => m.role === 'user')?.content ?? '').toLowerCase();
}

/**
 * A script for the emulator from reply-book rules: the first rule (in order) whose tool the request
 * offers and whose words the last user message contains answers the call; otherwise the emulator's
 * own reply. A call after a tool result is answered by the emulator (so a runtime's loop ends).
 */
export function replyBookScript(rules: readonly ReplyBookRule[]): EmulatorScript | undefined {
  if (rules.length === 0) return undefined;
  return (call) => {
    if (call.afterToolResult || call.toolChoice === 'none') return undefined;
    const said = thisTurnsWords(call.transcript);
    const offered = new Set(call.tools.map((t) => t.name));
    const forced = call.toolChoice !== 'auto' && call.toolChoice !== 'required' ? call.toolChoice : null;
    const rule = rules.find(
      (r) => offered.has(r.tool) && (forced === null || forced === r.tool) && r.whenPlayerSays.some((w) => said.includes(w.toLowerCase())),
    );
    return rule ? { kind: 'tool', name: rule.tool, args: rule.args } : undefined;
  };
}
