import type { InputSlot, InputSource } from '../../context';
import { evaluatePointer, type InputBinding } from '../../plugins-sdk';
import type { RuntimeOutput } from '../journal/journal';
import type { CatalogRuntime, RuntimeCatalog } from '../catalog/runtime-catalog';
import { InputBindingError } from './errors';

export interface ResolveInputSlotsOptions {
  catalog: RuntimeCatalog;
  /** The runtime whose `io.inputs` are resolved. */
  runtime: CatalogRuntime;
  /** Outputs this execution has produced so far (`ExecutionJournal.outputs`). */
  outputs: Iterable<RuntimeOutput>;
}

/** One earlier result a binding reads. */
interface SourceResult {
  runtime: CatalogRuntime;
  output: RuntimeOutput;
}

/**
 * Resolves a runtime's `io.inputs` (spec §4) from the outputs of earlier stages of this execution,
 * in declaration order, one `InputSlot` per binding:
 * - `from: { runtime }` reads that runtime's result; `from: { contract }` reads every runtime of an
 *   earlier stage whose `output.contract` is that contract, in catalog order;
 * - a result's value is its output parsed as JSON for `outputKind: structured`, its text otherwise
 *   (a story output's value is its story text);
 * - `select` (RFC 6901 JSON pointer) picks a part of each value;
 * - `cardinality: one` takes exactly one result: none, several, or a pointer that finds nothing
 *   fails the runtime (`InputBindingError`, permanent);
 * - `cardinality: many` takes every result: an array value gives its elements, any other value is
 *   one item; a result whose pointer finds nothing gives none; no result gives `items: []`.
 * Provenance is `{ pluginId, runtimeId, resultId }`, where `resultId` is the output's message id:
 * the prompt shows only pluginId and runtimeId (libs/context), `resultId` stays with tools,
 * hooks (`sources.inputSlots`) and function runtimes (`ctx.inputs`), which get these slots
 * unchanged (the story-text pointer sentence replaces a value only in the prompt).
 */
export function resolveInputSlots(options: ResolveInputSlotsOptions): InputSlot[] {
  const { catalog, runtime } = options;
  const outputs = [...options.outputs];
  return Object.entries(runtime.manifest.io.inputs).map(([binding, input]) => {
    const fail = (reason: string) => new InputBindingError({ pluginId: runtime.pluginId, runtimeId: runtime.runtimeId, binding, reason });
    const providers = providersOf(catalog, runtime, input);
    const results = providers.flatMap((p): SourceResult[] => {
      const output = outputs.find((o) => o.pluginId === p.pluginId && o.runtimeId === p.runtimeId);
      return output ? [{ runtime: p, output }] : [];
    });
    const selected = results.map((r) => {
      const value = valueOf(r.output, () => fail(`the output of ${r.runtime.fullId} is not JSON (outputKind: structured)`));
      return { source: provenance(r), found: evaluatePointer(value, input.select ?? '') };
    });
    const what = 'runtime' in input.from ? `runtime ${input.from.runtime}` : `contract ${input.from.contract}`;
    if (input.cardinality === 'one') {
      if (selected.length === 0) throw fail(`no result of ${what} in an earlier stage of this execution`);
      if (selected.length > 1)
        throw fail(`cardinality: one, but ${selected.length} runtimes produced ${what}: ${results.map((r) => r.runtime.fullId).join(', ')}`);
      const [only] = selected;
      if (!only.found.found)
        throw fail(`select ${JSON.stringify(input.select)} finds nothing in the result of ${only.source.pluginId}/${only.source.runtimeId}`);
      return { binding, cardinality: 'one', value: only.found.value, source: only.source };
    }
    const items = selected.flatMap((s) => (!s.found.found ? [] : Array.isArray(s.found.value) ? s.found.value : [s.found.value]));
    const declared = providers[0] ? { pluginId: providers[0].pluginId, runtimeId: providers[0].runtimeId } : undefined;
    const source = selected[0]?.source ?? declared ?? { pluginId: runtime.pluginId, runtimeId: runtime.runtimeId };
    return { binding, cardinality: 'many', items, source, ...(selected.length > 1 ? { sources: selected.map((s) => s.source) } : {}) };
  });
}

/** The runtimes a binding reads: the named one, or the contract's providers in earlier stages. */
function providersOf(catalog: RuntimeCatalog, consumer: CatalogRuntime, input: InputBinding): CatalogRuntime[] {
  const from = input.from;
  if ('runtime' in from) return catalog.all().filter((r) => r.fullId === from.runtime);
  return catalog.all().filter((r) => r.manifest.output.contract === from.contract && catalog.isEarlier(r, consumer));
}

function valueOf(output: RuntimeOutput, notJson: () => Error): unknown {
  if (output.outputKind !== 'structured') return output.text;
  try {
    return JSON.parse(output.text) as unknown;
  } catch {
    throw notJson();
  }
}

const provenance = (r: SourceResult): InputSource => ({ pluginId: r.output.pluginId, runtimeId: r.output.runtimeId, resultId: r.output.messageId });
