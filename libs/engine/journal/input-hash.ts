import { createHash } from 'node:crypto';
import { BoundedMemo } from '../../memo';

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
  const canonical = canonicalJson(input) ?? 'undefined';
  if (canonical.length > HASHES_KEPT_UP_TO) return sha256(canonical);
  let hash = hashes.get(canonical);
  if (hash === undefined) hashes.set(canonical, (hash = sha256(canonical)));
  return hash;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * The hashes of short inputs, by their canonical JSON: every runtime of an execution resolves each
 * `prompt.segment@1` and `session.world-context@1` provider with the same small input (the
 * player's text, `{}`), ~145 times an Emberback turn, a SHA-256 each (issue 33). Longer inputs (a
 * history) are hashed each time: keeping them as keys would hold their text.
 */
const HASHES_KEPT_UP_TO = 2_048;
const hashes = new BoundedMemo<string, string>({ maxEntries: 256 });

/** Key of one extension result within an execution: (point, provider, extension id, input). */
export function resultKey(point: string, pluginId: string, extensionId: string, hash: string): string {
  return `${point}\u0000${pluginId}\u0000${extensionId}\u0000${hash}`;
}
