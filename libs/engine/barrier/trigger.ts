import { estimateTokens, imageTokens } from '../../context';
import { type ModelCall, type ProviderRegistry, responseReserve, type SlotConfig } from '../../providers';
import { SUMMARY_SLOT } from './summary-model';

/** The slot whose model writes the story (spec §1: the story model of the effective window). */
export const STORY_SLOT = 'story';

/**
 * Compaction starts when the estimated request of the turn's first shared-history agent exceeds
 * this share of the trigger window (the spec leaves the share to the framework). The rest is room
 * for what the turn adds after the estimate: this turn's story text for later stages, the agent
 * loop's tool calls and results, and the estimate's own error (about four characters a token).
 */
export const COMPACTION_TRIGGER_SHARE = 0.75;

/** A slot's input capacity: its context window after its response reserve (the budget's input limit, libs/engine/budget). */
export function inputWindow(slot: Pick<SlotConfig, 'contextWindow' | 'maxOutputTokens' | 'responseReserve'>): number {
  return Math.max(0, slot.contextWindow - responseReserve(slot));
}

export interface CompactionWindows {
  /** The trigger window, also the effective window of the budgets: the smaller input capacity of the story and the fast model. */
  effective: number;
  /** The fast (summary) model's own input capacity. */
  fastInput: number;
  /** The estimate above which the barrier compacts. */
  threshold: number;
}

/** Spec §1: the trigger window is the smaller input window of the story slot and the summary slot, each after its response reserve. */
export function compactionWindows(providers: Pick<ProviderRegistry, 'config'>): CompactionWindows {
  const slots = providers.config.slots;
  const fastInput = inputWindow(slots[SUMMARY_SLOT]);
  const effective = Math.min(inputWindow(slots[STORY_SLOT]), fastInput);
  return { effective, fastInput, threshold: Math.floor(effective * COMPACTION_TRIGGER_SHARE) };
}

/** The framework's estimate of a request's input tokens: every message's text, 1,500 per inline image (spec §1), and the tool definitions. */
export function estimateRequestTokens(call: Pick<ModelCall, 'messages' | 'tools'>): number {
  return requestTokens(call, toolsJson(call), estimateTokens);
}

/**
 * Whether `estimateRequestTokens(call)` is above `threshold`, and that estimate (or, when it is not
 * above, a bound it does not exceed). The estimate of a text is never more than its length in
 * UTF-16 units (a code point is one unit or two; a CJK one counts one token, the others a quarter
 * each, rounded up once), so a request whose texts are no longer than the threshold is under it
 * without counting a character: the barrier of a turn far from its window reads the lengths only,
 * not every character of the history again (issue 33: ~0.6 % of a worker's CPU per narrator turn).
 */
export function requestTokensOver(call: Pick<ModelCall, 'messages' | 'tools'>, threshold: number): { over: boolean; tokens: number } {
  const tools = toolsJson(call);
  const bound = requestTokens(call, tools, (text) => text.length);
  if (bound <= threshold) return { over: false, tokens: bound };
  const tokens = requestTokens(call, tools, estimateTokens);
  return { over: tokens > threshold, tokens };
}

function toolsJson(call: Pick<ModelCall, 'tools'>): string | null {
  return call.tools && call.tools.length > 0 ? JSON.stringify(call.tools) : null;
}

function requestTokens(call: Pick<ModelCall, 'messages'>, tools: string | null, count: (text: string) => number): number {
  const messages = call.messages.reduce((sum, m) => sum + count(m.content), 0) + imageTokens(call.messages);
  return messages + (tools === null ? 0 : count(tools));
}
