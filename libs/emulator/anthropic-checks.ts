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
