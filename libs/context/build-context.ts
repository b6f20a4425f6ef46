import { historyWindow } from './history-window';
import type { AssembledContext, BuildContextParams, ContextMessage } from './types';

/**
 * The one entry point of prompt assembly (spec §1). Pure: everything it needs is in `params`.
 * First cut: system prompt = runtime body; messages = windowed history + current player input.
 */
export async function buildContext(params: BuildContextParams): Promise<AssembledContext> {
  const history: ContextMessage[] = historyWindow(params.history, params.runtime).map((m) => ({
    role: m.role,
    content: m.text,
  }));
  return {
    systemPrompt: params.runtime.body.trim(),
    messages: [...history, { role: 'user', content: params.playerInput.text }],
    turnContext: '',
  };
}
