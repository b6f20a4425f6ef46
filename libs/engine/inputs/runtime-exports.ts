import type { HistoryMessage, RuntimeExport } from '../../context';
import { evaluatePointer } from '../../plugins-sdk';
import type { RuntimeOutput } from '../journal/journal';
import type { CatalogRuntime, RuntimeCatalog } from '../catalog/runtime-catalog';

export interface ResolveRuntimeExportsOptions {
  catalog: RuntimeCatalog;
  /** The runtime whose request shows the exports. */
  runtime: CatalogRuntime;
  /** Outputs this execution has produced so far (`ExecutionJournal.outputs`). */
  outputs: Iterable<RuntimeOutput>;
  /** The committed, uncompacted history the request reads (a regenerated turn's without the turn it re-runs). */
  history: readonly HistoryMessage[];
}

/** A result of an exporting runtime: its JSON value and its message id. */
interface ExportedResult {
  value: unknown;
  resultId: string;
}

/**
 * The exports a runtime's request shows in `<runtime-exports>` (spec §2, §4): for each `io.exports`
 * entry whose audience takes the runtime in (`RuntimeCatalog.exportsTo`, in its fixed order), the
 * part `select` finds of the exporting runtime's latest result:
 * - its output in an earlier stage of this execution, else its latest committed output in the
 *   history the request reads: a runtime after the narrative reaches the story runtimes of the
 *   next turn, and a regenerated turn sees what the turn before the one it re-runs exported;
 * - a result is the structured output parsed as JSON: a skipped run (`schedule.when`, an empty
 *   output) produced none, so the one before stands;
 * - no result, or a pointer that finds nothing: the entry is left out (no block when none is left).
 * Provenance is `{ pluginId, runtimeId, resultId }`, `resultId` the result's message id: the prompt
 * shows only pluginId and runtimeId. Derived from the journal and the history alone, so the worker
 * and a rebuild from the events get the same.
 */
export function resolveRuntimeExports(options: ResolveRuntimeExportsOptions): RuntimeExport[] {
  const { catalog, runtime } = options;
  const outputs = [...options.outputs];
  const results = new Map<CatalogRuntime, ExportedResult | null>();
  return catalog.exportsTo(runtime).flatMap(({ producer, name, declaration }) => {
    if (!results.has(producer)) results.set(producer, latestResult({ ...options, outputs }, producer));
    const result = results.get(producer);
    if (!result) return [];
    const found = evaluatePointer(result.value, declaration.select ?? '');
    if (!found.found) return [];
    return [{ name, value: found.value, source: { pluginId: producer.pluginId, runtimeId: producer.runtimeId, resultId: result.resultId } }];
  });
}

/** The producer's latest result the request may read (see `resolveRuntimeExports`), or null. */
function latestResult(options: ResolveRuntimeExportsOptions & { outputs: RuntimeOutput[] }, producer: CatalogRuntime): ExportedResult | null {
  const own = (m: { pluginId: string | null; runtimeId: string | null; outputKind: string | null }) =>
    m.pluginId === producer.pluginId && m.runtimeId === producer.runtimeId && m.outputKind === 'structured';
  // this execution's output counts only from an earlier stage: one of the same stage may or may not be recorded yet
  const current = options.catalog.isEarlier(producer, options.runtime) ? options.outputs.filter(own) : [];
  const committed = options.history.filter(own).reverse();
  for (const candidate of [...current, ...committed]) {
    const value = parsed(candidate.text);
    if (value !== undefined) return { value, resultId: candidate.messageId };
  }
  return null;
}

function parsed(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
