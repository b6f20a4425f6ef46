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
  const text = canonicalJson(input) ?? 'undefined';
  if (text.length > KEPT_TEXT_MAX) return sha256(text);
  let hash = hashes.get(text);
  if (hash === undefined) {
    hash = sha256(text);
    if (hashes.size >= HASHES_KEPT) hashes.delete(hashes.keys().next().value!);
    hashes.set(text, hash);
  }
  return hash;
}

/**
 * `inputHash`'s answers for the latest inputs (the oldest forgotten past the bound), by their
 * canonical JSON: a turn's extension inputs recur (the compaction barrier's estimate, then each
 * step, resolve the same `prompt.segment@1` input), and a SHA-256 each time was ~0.4 % of a
 * worker's CPU per narrator turn (issue 33). Only short texts are kept (a history transform's
 * input, the whole history, is hashed each time: keeping it would hold the history).
 */
const hashes = new Map<string, string>();
const HASHES_KEPT = 512;
const KEPT_TEXT_MAX = 4_096;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Key of one extension result within an execution: (point, provider, extension id, input). */
export function resultKey(point: string, pluginId: string, extensionId: string, hash: string): string {
  return `${point}\u0000${pluginId}\u0000${extensionId}\u0000${hash}`;
}
