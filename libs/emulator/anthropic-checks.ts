import { signReasoning, verifyReasoning } from './reasoning';

type Block = Record<string, unknown> & { type: string };
type Message = { role: string; content: string | Block[] };

const blocksOf = (m: Message | undefined): Block[] => (m && typeof m.content !== 'string' ? m.content : []);
const idsOf = (m: Message | undefined, type: string, key: string) => blocksOf(m).flatMap((b) => (b.type === type ? [String(b[key])] : []));

/** A redacted_thinking block's `data`: the reasoning, encoded and signed. */
export function redactedData(reasoning: string): string {
  const payload = Buffer.from(reasoning, 'utf8').toString('base64');
  return `${payload}.${signReasoning('redacted_thinking', payload)}`;
}

const validRedacted = (data: unknown) => {
  if (typeof data !== 'string') return false;
  const [payload, signature] = data.split('.');
  return verifyReasoning('redacted_thinking', payload ?? '', signature);
};

const THINKING_DOCS = 'Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking';

/**
 * What the Messages API rejects in a request with thinking enabled, with its messages: a budget
 * missing, under 1024 or not under max_tokens, a temperature other than 1, top_k, top_p under
 * 0.95, a tool_choice that forces tool use. Null: accepted (or thinking is not enabled).
 */
export function anthropicThinkingError(body: {
  max_tokens: number;
  thinking?: { type: string; budget_tokens?: number };
  temperature?: unknown;
  top_k?: unknown;
  top_p?: unknown;
  tool_choice?: { type: string };
}): string | null {
  if (body.thinking?.type !== 'enabled') return null;
  const budget = body.thinking.budget_tokens;
  if (budget === undefined) return 'thinking.enabled.budget_tokens: Field required';
  if (budget < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
  if (budget >= body.max_tokens) return `\`max_tokens\` must be greater than \`thinking.budget_tokens\`. ${THINKING_DOCS}#max-tokens-and-context-window-size`;
  if (body.temperature !== undefined && body.temperature !== 1)
    return `\`temperature\` may only be set to 1 when thinking is enabled. ${THINKING_DOCS}#feature-compatibility`;
  if (body.top_k !== undefined) return `\`top_k\` must be unset when thinking is enabled. ${THINKING_DOCS}#feature-compatibility`;
  if (typeof body.top_p === 'number' && body.top_p < 0.95)
    return `\`top_p\` must be greater than or equal to 0.95 or unset when thinking is enabled. ${THINKING_DOCS}#feature-compatibility`;
  if (body.tool_choice?.type === 'any' || body.tool_choice?.type === 'tool') return 'Thinking may not be enabled when tool_choice forces tool use.';
  return null;
}

/**
 * What the Messages API rejects in a tool loop, with its messages: tool_result blocks without a
 * tool_use in the previous message, tool_use blocks not answered in the next message, thinking
 * blocks without their signature or with a changed one, and (with thinking on) a final assistant
 * turn that does not start with its thinking. Null: accepted.
 */
export function anthropicLoopError(messages: readonly Message[], thinking: boolean): string | null {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    const blocks = blocksOf(m);
    if (m.role === 'user') {
      const calls = new Set(idsOf(messages[i - 1], 'tool_use', 'id'));
      for (let j = 0; j < blocks.length; j++) {
        const b = blocks[j];
        if (b.type === 'tool_result' && (messages[i - 1]?.role !== 'assistant' || !calls.has(String(b.tool_use_id)))) {
          return `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(b.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
        }
      }
      continue;
    }
    const answered = new Set(idsOf(messages[i + 1], 'tool_result', 'tool_use_id'));
    const unanswered = i + 1 < messages.length ? idsOf(m, 'tool_use', 'id').filter((id) => !answered.has(id)) : [];
    if (unanswered.length) {
      return `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${unanswered.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    }
    for (let j = 0; j < blocks.length; j++) {
      const b = blocks[j];
      if (b.type === 'thinking') {
        if (typeof b.signature !== 'string' || b.signature === '') return `messages.${i}.content.${j}.thinking.signature: Field required`;
        if (!verifyReasoning('thinking', String(b.thinking), b.signature)) return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
      }
      if (b.type === 'redacted_thinking' && !validRedacted(b.data)) return `messages.${i}.content.${j}: Invalid \`data\` in \`redacted_thinking\` block`;
    }
  }
  if (thinking) {
    // the lastmost tool_use / tool_result exchange: its assistant turn must start with thinking
    const last = messages.length - 1;
    if (messages[last]?.role === 'user' && idsOf(messages[last], 'tool_result', 'tool_use_id').length && messages[last - 1]?.role === 'assistant') {
      const first = blocksOf(messages[last - 1])[0]?.type ?? 'text';
      if (first !== 'thinking' && first !== 'redacted_thinking') {
        return `messages.${last - 1}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`.`;
      }
    }
  }
  return null;
}
