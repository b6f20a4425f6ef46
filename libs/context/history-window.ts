import type { HistoryMessage, RuntimeView } from './types';

/**
 * Spec §1 step 3: drop other plugins' structured output and runtime rows with no text, then keep
 * only the last `maxTurns` turns (counted by turnId) when the runtime declares a window.
 */
export function historyWindow(history: readonly HistoryMessage[], runtime: RuntimeView): HistoryMessage[] {
  const visible = history.filter((m) => {
    if (m.sourceType === 'runtime' && m.text.trim() === '') return false;
    if (m.outputKind === 'structured' && m.pluginId !== runtime.pluginId) return false;
    return true;
  });
  const maxTurns = runtime.history.maxTurns;
  if (maxTurns === undefined) return visible;
  if (maxTurns === 0) return [];
  const keep = new Set<string>();
  for (let i = visible.length - 1; i >= 0; i--) {
    const turnId = visible[i].turnId;
    if (keep.has(turnId)) continue;
    if (keep.size === maxTurns) break;
    keep.add(turnId);
  }
  return visible.filter((m) => keep.has(m.turnId));
}
