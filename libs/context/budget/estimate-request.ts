import { estimateTokens } from '../../text';
import { IMAGE_TOKENS } from '../images';
import type { BudgetMessage, BudgetRequest, BudgetLimits, Estimator } from './types';

/** The input limit of a model: context window − response reserve. */
export function inputLimit(limits: BudgetLimits): number {
  return limits.contextWindow - limits.responseReserve;
}

/** The 70 % stop of the budget steps (integer math: floor(limit × 7 / 10)). */
export function budgetTarget(limit: number): number {
  return Math.floor((limit * 7) / 10);
}

/** Problems of token limits (a configuration error at start-up); empty when valid. */
export function limitProblems(limits: BudgetLimits): string[] {
  const problems: string[] = [];
  if (!Number.isInteger(limits.contextWindow) || limits.contextWindow <= 0) problems.push('contextWindow must be a positive integer');
  if (!Number.isInteger(limits.responseReserve) || limits.responseReserve <= 0) problems.push('the response reserve must be a positive integer');
  if (problems.length === 0 && limits.responseReserve >= limits.contextWindow) problems.push('the response reserve must be smaller than contextWindow');
  return problems;
}

/** Estimated tokens of one message: content, each tool call's name and arguments JSON, thinking text, 1,500 per image. */
export function estimateMessage(message: BudgetMessage, estimator: Estimator): number {
  let total = estimator(message.content) + (message.images?.length ?? 0) * IMAGE_TOKENS;
  for (const call of message.toolCalls ?? []) total += estimator(call.name) + estimator(JSON.stringify(call.arguments));
  if (message.thinking) total += estimator(message.thinking.text);
  return total;
}

/** Estimated tokens of what a request sends besides its messages: tool definitions (JSON) and the response schema, counted twice. */
export function estimateFixed(req: Pick<BudgetRequest<BudgetMessage>, 'tools' | 'responseSchema'>, estimator: Estimator): number {
  let total = 0;
  for (const tool of req.tools ?? []) total += estimator(JSON.stringify(tool));
  // Twice: the bridge writes it into the system prompt, and Responses and Gemini also send it natively.
  if (req.responseSchema) total += 2 * estimator(JSON.stringify(req.responseSchema));
  return total;
}

/** Estimated input tokens of a request: messages, tool definitions, the response schema twice. */
export function estimateRequest<M extends BudgetMessage>(
  req: Pick<BudgetRequest<M>, 'messages' | 'tools' | 'responseSchema'> & { estimator?: Estimator },
): number {
  const estimator = req.estimator ?? estimateTokens;
  return req.messages.reduce((n, m) => n + estimateMessage(m, estimator), estimateFixed(req, estimator));
}
