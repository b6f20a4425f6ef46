import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every depth (`undefined` members dropped, as JSON does). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v as Record<string, unknown>).sort()) sorted[k] = (v as Record<string, unknown>)[k];
    return sorted;
  });
}

/** A stable hash of an extension input: equal inputs (any key order) hash alike. */
export function inputHash(input: unknown): string {
  return createHash('sha256')
    .update(canonicalJson(input) ?? 'undefined')
    .digest('hex');
}

/** Key of one extension result within an execution: (point, provider, extension id, input). */
export function resultKey(point: string, pluginId: string, extensionId: string, hash: string): string {
  return `${point}\u0000${pluginId}\u0000${extensionId}\u0000${hash}`;
}
