import { signReasoning, verifyReasoning } from './reasoning';

type Part = {
  text?: string;
  thought?: boolean;
  thoughtSignature?: unknown;
  functionCall?: { name: string; id?: unknown; args?: unknown };
  functionResponse?: { name: string; id?: unknown };
};
type Content = { role: string; parts: Part[] };

/** What a thought signature signs: the function call, or the text of its part. */
const signedPayload = (p: Part) => (p.functionCall ? JSON.stringify({ name: p.functionCall.name, args: p.functionCall.args ?? {} }) : (p.text ?? ''));

export function signPart<T extends Part>(part: T): T {
  return { ...part, thoughtSignature: signReasoning('gemini', signedPayload(part)) };
}

/**
 * Thinking, as the request sets it: a budget above 0, thoughts asked for, or a Gemini 3 model (it
 * cannot be turned off there, and its function calls always come with signatures).
 */
export function geminiThinking(model: string, generationConfig: unknown): boolean {
  const tc = (generationConfig as { thinkingConfig?: { thinkingBudget?: unknown; includeThoughts?: unknown } } | undefined)?.thinkingConfig;
  if (/^gemini-3/.test(model)) return true;
  if (tc?.thinkingBudget === 0) return false;
  return (typeof tc?.thinkingBudget === 'number' && tc.thinkingBudget !== 0) || tc?.includeThoughts === true || /^gemini-3/.test(model);
}

/**
 * What generateContent rejects in a tool loop: function responses that do not answer the calls of
 * the model turn before them, a thought signature that does not verify (changed), and on Gemini 3 a
 * function call of the current turn sent back without its signature. Null: accepted.
 */
export function geminiLoopError(model: string, contents: readonly Content[]): string | null {
  const lastUserText = contents.map((c) => c.role === 'user' && c.parts.some((p) => p.text !== undefined)).lastIndexOf(true);
  for (let i = 0; i < contents.length; i++) {
    const c = contents[i];
    const responses = c.parts.flatMap((p) => (p.functionResponse ? [p.functionResponse] : []));
    if (responses.length) {
      const calls = (contents[i - 1]?.parts ?? []).flatMap((p) => (p.functionCall ? [p.functionCall] : []));
      if (calls.length !== responses.length) {
        return 'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.';
      }
      for (const r of responses) {
        const matched = calls.some((call) => call.name === r.name && (call.id === undefined || r.id === undefined || call.id === r.id));
        if (!matched) return `Function response "${r.name}" does not answer a function call of the previous turn.`;
      }
    }
    if (c.role !== 'model') continue;
    let firstCall = true;
    for (let j = 0; j < c.parts.length; j++) {
      const p = c.parts[j];
      if (p.thoughtSignature !== undefined && !verifyReasoning('gemini', signedPayload(p), p.thoughtSignature)) return 'Corrupted thought signature.';
      if (p.functionCall && firstCall) {
        firstCall = false;
        if (/^gemini-3/.test(model) && i > lastUserText && p.thoughtSignature === undefined) {
          return `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${p.functionCall.name}\` , position ${j + 1}.`;
        }
      }
    }
  }
  return null;
}
