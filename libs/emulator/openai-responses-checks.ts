import { signReasoning, verifyReasoning } from './reasoning';

type Item = { type?: string; role?: string; call_id?: unknown; id?: unknown; encrypted_content?: unknown };

/** A reasoning item's encrypted_content: the reasoning, encoded and signed. */
export function encryptedReasoning(reasoning: string): string {
  const payload = Buffer.from(reasoning, 'utf8').toString('base64');
  return `${payload}.${signReasoning('reasoning', payload)}`;
}

/** Reasoning models of the Responses API, by name (the chat models have none). */
export const reasoningModel = (model: string) => /^(gpt-5(?!(\.\d+)?-chat)|o\d|codex-)/.test(model);

/**
 * What the Responses API rejects in a tool loop (message, param): a function_call_output without
 * an earlier function_call of its call_id, a function_call left without its output, a reasoning
 * item that is not followed by the item it belongs to, and encrypted reasoning that does not
 * verify. Null: accepted.
 */
export function responsesLoopError(items: readonly Item[]): { message: string; param: string } | null {
  const calls = new Set<string>();
  const outputs = new Set(items.flatMap((i) => (i.type === 'function_call_output' ? [String(i.call_id)] : [])));
  for (let n = 0; n < items.length; n++) {
    const item = items[n];
    if (item.type === 'function_call') {
      calls.add(String(item.call_id));
      if (n < items.length - 1 && !outputs.has(String(item.call_id)))
        return { message: `No tool output found for function call ${String(item.call_id)}.`, param: 'input' };
    }
    if (item.type === 'function_call_output' && !calls.has(String(item.call_id))) {
      return { message: `No tool call found for function call output with call_id ${String(item.call_id)}.`, param: 'input' };
    }
    if (item.type === 'reasoning') {
      const next = items[n + 1];
      if (!next || next.type === 'reasoning' || next.type === 'function_call_output' || (next.role !== undefined && next.role !== 'assistant')) {
        return { message: `Item '${String(item.id)}' of type 'reasoning' was provided without its required following item.`, param: 'input' };
      }
      if (item.encrypted_content !== undefined) {
        const [payload, signature] = String(item.encrypted_content).split('.');
        if (!verifyReasoning('reasoning', payload ?? '', signature)) {
          return { message: `The encrypted content for item ${String(item.id)} could not be verified.`, param: 'input' };
        }
      }
    }
  }
  return null;
}
