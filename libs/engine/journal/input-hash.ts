import { createHash } from 'node:crypto';
import { BoundedMemo } from '../../memo';

/** JSON with object keys sorted at every depth (`undefined` members dropped, as JSON does). */
export function canonicalJson(value: unknown): string {
  try {
    return plainJson(value, 0) as string;
  } catch (error) {
    if (error !== NOT_PLAIN) throw error;
    return replacerJson(value);
  }
}

/** `canonicalJson` as `JSON.stringify` with a replacer makes it: a sorted copy of every object on the way. */
export function replacerJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v as Record<string, unknown>).sort()) sorted[k] = (v as Record<string, unknown>)[k];
    return sorted;
  });
}

/** Thrown by `plainJson` at a value it leaves to `replacerJson`. */
const NOT_PLAIN = Symbol('not plain JSON');
/** Deeper than this (or a cycle), `replacerJson` answers (and throws what it throws). */
const PLAIN_DEPTH = 64;
const ARRAY_INDEX = /^(?:0|[1-9]\d{0,9})$/;

/**
 * `replacerJson`'s text written directly, without a sorted copy of each object nor a call of the
 * replacer per member (issue 33: ~145 inputs hashed an Emberback turn), for what an input mostly is:
 * strings, numbers, booleans, null, arrays and plain objects, none with a `toJSON`. Anything else
 * (a Date, a Map, a bigint, a cycle, an own `__proto__` key) throws `NOT_PLAIN`. The members of an object come in the order
 * `replacerJson`'s sorted copy holds them: its array-index keys first, ascending (an object's own
 * key order puts them there), then the others sorted.
 */
function plainJson(value: unknown, depth: number): string | undefined {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    case 'bigint':
      throw NOT_PLAIN;
  }
  if (value === null) return 'null';
  if (depth > PLAIN_DEPTH || typeof (value as { toJSON?: unknown }).toJSON === 'function') throw NOT_PLAIN;
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto === Array.prototype) {
    const items = value as unknown[];
    let text = '[';
    for (let i = 0; i < items.length; i++) text += (i === 0 ? '' : ',') + (plainJson(items[i], depth + 1) ?? 'null');
    return text + ']';
  }
  if (proto !== Object.prototype && proto !== null) throw NOT_PLAIN;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  let indexes = 0;
  while (indexes < keys.length && ARRAY_INDEX.test(keys[indexes]!) && Number(keys[indexes]) < 4294967295) indexes++;
  const ordered = indexes === 0 ? keys.sort() : [...keys.slice(0, indexes), ...keys.slice(indexes).sort()];
  let text = '{';
  for (const key of ordered) {
    // the sorted copy's assignment of an own `__proto__` sets its prototype instead: left to it
    if (key === '__proto__') throw NOT_PLAIN;
    const member = plainJson(record[key], depth + 1);
    if (member === undefined) continue;
    text += (text.length === 1 ? '' : ',') + JSON.stringify(key) + ':' + member;
  }
  return text + '}';
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
