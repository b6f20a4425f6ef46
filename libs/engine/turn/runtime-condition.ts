import { evaluatePointer, type RuntimeCondition } from '../../plugins-sdk';
import type { RuntimeOutput } from '../journal/journal';
import type { RuntimeCatalog } from '../catalog/runtime-catalog';

/** Not truthy for `schedule.when`: `false`, `null`, `0`, `""`, an empty array or object. */
function truthy(value: unknown): boolean {
  if (value === false || value === null || value === 0 || value === '' || value === undefined) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

/**
 * Whether a runtime with `schedule.when` runs in this execution: the named earlier runtime's output
 * (a function's or a structured runtime's as JSON, any other as its text) at `select` is truthy.
 * Derived from the recorded outputs only, so every attempt and a rebuild decide the same.
 * A runtime without `when` always runs.
 */
export function conditionHolds(catalog: RuntimeCatalog, when: RuntimeCondition | undefined, outputs: Iterable<RuntimeOutput>): boolean {
  if (!when) return true;
  const output = [...outputs].find((o) => `${o.pluginId}/${o.runtimeId}` === when.runtime);
  if (!output) return false;
  const source = catalog.all().find((r) => r.fullId === when.runtime);
  let value: unknown = output.text;
  if (source?.manifest.type === 'function' || output.outputKind === 'structured') {
    try {
      value = JSON.parse(output.text) as unknown;
    } catch {
      return false;
    }
  }
  const found = evaluatePointer(value, when.select ?? '');
  return found.found && truthy(found.value);
}
