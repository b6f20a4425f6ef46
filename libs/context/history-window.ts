import type { HistoryMessage, RuntimeView } from './types';

/**
 * Spec §1 step 3: drop other plugins' structured output and runtime rows with no text, then keep
 * only the last `maxTurns` turns (counted by turnId) when the runtime declares a window. Image
 * description rows (sourceType system) are not turns; those inside the window stay with it.
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
  let first = visible.length;
  for (let i = visible.length - 1; i >= 0; i--) {
    if (visible[i].sourceType === 'system') continue;
    const turnId = visible[i].turnId;
    if (!keep.has(turnId)) {
      if (keep.size === maxTurns) break;
      keep.add(turnId);
    }
    first = i;
  }
  return visible.slice(first).filter((m) => m.sourceType === 'system' || keep.has(m.turnId));
}

/** Summaries are merged into the shared view; a windowed runtime gets them only when it asks. */
export function includesSummaries(runtime: RuntimeView): boolean {
  return runtime.history.maxTurns === undefined ? runtime.history.includeSummaries !== false : runtime.history.includeSummaries === true;
}
