type Message = { role: string; tool_calls?: unknown; tool_call_id?: unknown; reasoning_content?: unknown };

const callIds = (m: Message | undefined): string[] => (Array.isArray(m?.tool_calls) ? (m.tool_calls as { id?: unknown }[]).map((c) => String(c?.id)) : []);

/** DeepSeek thinking mode, as the request sets it (flash / V4 / reasoner think unless told not to). */
export function deepSeekThinking(model: string, thinking: unknown): boolean {
  if (!/^deepseek-/.test(model)) return false;
  const type = (thinking as { type?: unknown } | undefined)?.type;
  if (type === 'enabled' || type === 'disabled') return type === 'enabled';
  return /^deepseek-(flash|v4|reasoner)/.test(model);
}

/**
 * What Chat Completions rejects in a tool loop (message, param): a tool message that answers no
 * call of the assistant message before its run of tool messages, an assistant tool call left
 * unanswered, and (DeepSeek thinking mode) a tool-calling assistant message of the current turn
 * without its reasoning_content. Null: accepted.
 */
export function chatLoopError(messages: readonly Message[], deepSeekThinking: boolean): { message: string; param: string } | null {
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m.role === 'tool') {
      let owner = i - 1;
      while (owner >= 0 && messages[owner].role === 'tool') owner--;
      if (owner < 0 || messages[owner].role !== 'assistant' || callIds(messages[owner]).length === 0) {
        return {
          message: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          param: `messages.[${i}].role`,
        };
      }
      if (!callIds(messages[owner]).includes(String(m.tool_call_id))) {
        return {
          message: `Invalid parameter: 'tool_call_id' of '${String(m.tool_call_id)}' not found in 'tool_calls' of previous message.`,
          param: `messages.[${i}].tool_call_id`,
        };
      }
    }
  }
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    const ids = m.role === 'assistant' ? callIds(m) : [];
    if (ids.length === 0) continue;
    if (deepSeekThinking && i > lastUser && typeof m.reasoning_content !== 'string') {
      return {
        message: `Missing \`reasoning_content\` field in the assistant message at message index ${i}. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls`,
        param: `messages.[${i}].reasoning_content`,
      };
    }
    if (i === messages.length - 1) continue;
    const answered = new Set<string>();
    for (let j = i + 1; j < messages.length && messages[j].role === 'tool'; j++) answered.add(String(messages[j].tool_call_id));
    const missing = ids.filter((id) => !answered.has(id));
    if (missing.length) {
      return {
        message: `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(', ')}`,
        param: `messages.[${i}].role`,
      };
    }
  }
  return null;
}
