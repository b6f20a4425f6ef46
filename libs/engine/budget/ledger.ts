import type { BudgetLedger, LedgerEntry } from '../../context';

/** What one recorded call added to its run's ledger (`llm.calling@1` budget.added), by step. */
export type RecordedLedgers = ReadonlyMap<number, readonly LedgerEntry[]>;

/**
 * The ledger step `step` of a runtime's loop starts from (spec §5 "per-run ledger"): what the
 * recorded calls of its earlier steps added, in step order (pure: the worker's loop and a rebuild
 * fold the same records). A new execution starts with an empty ledger.
 */
export function runLedger(recorded: RecordedLedgers | undefined, step: number, resumedAfter?: number): BudgetLedger {
  if (!recorded) return { entries: [] };
  // spec §5 "Resume starts a new ledger": the steps up to a resumed suspension add nothing
  const steps = [...recorded.keys()].filter((s) => s < step && (resumedAfter === undefined || s > resumedAfter)).sort((a, b) => a - b);
  return { entries: steps.flatMap((s) => recorded.get(s)!) };
}

/** The entries a request added to the ledger it was given (the ledger only grows). */
export function addedEntries(given: BudgetLedger, after: BudgetLedger): LedgerEntry[] {
  return after.entries.slice(given.entries.length);
}
