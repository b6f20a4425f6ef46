import { type BudgetLimits, limitProblems } from '../../context';
import { type LlmConfig, responseReserve, type SlotConfig, SlotConfigError } from '../../providers';

/** A slot's token limits as the budget reads them: its context window and its response reserve. */
export function slotLimits(slot: Pick<SlotConfig, 'contextWindow' | 'maxOutputTokens' | 'responseReserve'>): BudgetLimits {
  return { contextWindow: slot.contextWindow, responseReserve: responseReserve(slot) };
}

/**
 * Spec §5: invalid token limits are a configuration error at start-up (`LLM_CONFIG_INVALID`),
 * naming each slot's field (`slots.<name>.responseReserve`, or `.contextWindow` for a window the
 * reserve does not fit in). Every slot is checked, used or not.
 */
export function checkSlotLimits(config: LlmConfig, file: string): void {
  const issues: { path: string; message: string }[] = [];
  for (const [name, slot] of Object.entries(config.slots)) {
    const field = slot.responseReserve !== undefined ? 'responseReserve' : 'maxOutputTokens';
    for (const problem of limitProblems(slotLimits(slot)))
      issues.push({ path: `slots.${name}.${problem.startsWith('contextWindow') ? 'contextWindow' : field}`, message: problem });
  }
  if (issues.length > 0) throw new SlotConfigError(file, issues);
}
