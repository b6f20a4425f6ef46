/**
 * JSON Merge Patch (RFC 7396): an object patch merges into the target key by key, `null` deletes
 * a key, anything else (an array, a string, …) replaces the target. The RFC's algorithm is a few
 * lines with no options, so it is written here rather than taken from a package.
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const result: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    // defined, not assigned: a `__proto__` key of a JSON body is a key like any other
    else Object.defineProperty(result, key, { value: applyMergePatch(result[key], value), enumerable: true, writable: true, configurable: true });
  }
  return result;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
