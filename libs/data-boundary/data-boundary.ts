/** Spec §4 "Data boundary": what the kernel writes into the prompt carries no bookkeeping fields. */

/** Any 8-4-4-4-12 hex id (every UUID version, the nil UUID): an id for tools and the kernel. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/**
 * An ISO 8601 date-time: a calendar date, `T` (or a space, as PostgreSQL writes it) and a time of
 * day, with optional seconds, fraction and zone; extended (`2026-01-02T03:04:05Z`) or basic
 * (`20260102T030405Z`) format. A bare date (`1492-10-12`) is a story value and stays.
 */
const ISO_DATE_TIME = new RegExp(
  [
    String.raw`^[+-]?\d{4,6}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}([.,]\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)?$`,
    String.raw`^\d{8}T\d{4}(\d{2}([.,]\d+)?)?(Z|[+-]\d{2}(\d{2})?)?$`,
  ].join('|'),
  'i',
);
/** Bookkeeping keys dropped whatever their value. */
const DROPPED_KEYS: ReadonlySet<string> = new Set(['sessionId', 'updatedAt', 'createdAt']);
/** Longer strings cannot be a UUID or a date-time (even padded): prose is not tested. */
const MAX_BOOKKEEPING_LENGTH = 64;
/** Deeper nesting is an error, not a stack overflow. */
export const MAX_MODEL_FACING_DEPTH = 256;

/** A value `modelFacingJson` cannot project: a cycle, or nesting deeper than the limit. */
export class ModelFacingJsonError extends Error {
  constructor(
    message: string,
    /** JSON path of the offending value, e.g. `$.a.b[2]`. */
    readonly path: string,
  ) {
    super(`modelFacingJson: ${message} at ${path}`);
    this.name = 'ModelFacingJsonError';
  }
}

/** A whole string value that is a UUID or an ISO date-time (surrounding whitespace ignored). */
export function isBookkeepingValue(value: unknown): boolean {
  if (typeof value !== 'string' || value.length > MAX_BOOKKEEPING_LENGTH) return false;
  const v = value.trim();
  return UUID.test(v) || ISO_DATE_TIME.test(v);
}

/** A key the projection drops: `sessionId`, `updatedAt`, `createdAt`, or a UUID used as a key. */
export function isBookkeepingKey(key: string): boolean {
  return DROPPED_KEYS.has(key) || (key.length <= MAX_BOOKKEEPING_LENGTH && UUID.test(key.trim()));
}

/**
 * The model-facing projection of a JSON-like value (spec §4), a new value (the input is never
 * changed). Recursively, in objects and arrays:
 * - a key `sessionId`, `updatedAt` or `createdAt` is dropped, whatever its value;
 * - a key whose value is a UUID or an ISO date-time string is dropped; so is a key that is itself
 *   a UUID (a map keyed by bookkeeping ids), with its value;
 * - an array element that is a UUID or an ISO date-time string is dropped.
 * Only whole values count: a UUID or a date-time inside prose is story text and stays, as do
 * readable ids (`"id": "mira"`) and story dates (`"date": "the third day of Frost"`, `"1492-10-12"`).
 * Like `JSON.stringify`: `toJSON` is applied first (a `Date` becomes an ISO string, so it is
 * dropped), functions, symbols and `undefined` are dropped from objects and become `null` in
 * arrays, only own enumerable string keys are read (an own `__proto__` key stays a plain key).
 * A cycle, or nesting deeper than {@link MAX_MODEL_FACING_DEPTH}, throws {@link ModelFacingJsonError}.
 * A value shared by two branches (not a cycle) is projected twice. A top-level UUID or date-time
 * string becomes `null`.
 */
export function modelFacingJson(value: unknown): unknown {
  const ancestors = new Set<object>();
  const path: (string | number)[] = [];
  const where = () => '$' + path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('');

  const project = (input: unknown, key: string | number): unknown => {
    let v = input;
    if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
      v = (v as { toJSON: (k: string) => unknown }).toJSON(String(key));
    }
    if (typeof v === 'bigint') return v.toString();
    if (v === null || typeof v !== 'object') return v;
    if (ancestors.has(v)) throw new ModelFacingJsonError('circular reference', where());
    if (ancestors.size >= MAX_MODEL_FACING_DEPTH) throw new ModelFacingJsonError(`nesting deeper than ${MAX_MODEL_FACING_DEPTH} levels`, where());
    ancestors.add(v);
    try {
      if (Array.isArray(v)) {
        const out: unknown[] = [];
        v.forEach((item, i) => {
          path.push(i);
          const projected = project(item, i);
          path.pop();
          if (isBookkeepingValue(projected)) return;
          out.push(projected === undefined || typeof projected === 'function' || typeof projected === 'symbol' ? null : projected);
        });
        return out;
      }
      const out: Record<string, unknown> = {};
      for (const [k, item] of Object.entries(v)) {
        if (isBookkeepingKey(k)) continue;
        path.push(k);
        const projected = project(item, k);
        path.pop();
        if (isBookkeepingValue(projected) || projected === undefined || typeof projected === 'function' || typeof projected === 'symbol') continue;
        // defineProperty: an own `__proto__` key stays data and never sets the prototype.
        Object.defineProperty(out, k, { value: projected, enumerable: true, writable: true, configurable: true });
      }
      return out;
    } finally {
      ancestors.delete(v);
    }
  };

  const top = project(value, '');
  return isBookkeepingValue(top) ? null : top;
}

export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** `<name>` … `</name>` around XML-escaped data: data is never interpolated again. */
export function dataBlock(name: string, content: string): string {
  return `<${name}>\n${escapeXml(content)}\n</${name}>`;
}

/** One io.selfData row: `- <key> | <JSON>`; an `id` equal to the key is not repeated. */
export function selfDataRow(key: string, value: unknown): string {
  let v = modelFacingJson(value);
  if (v !== null && typeof v === 'object' && !Array.isArray(v) && (v as Record<string, unknown>).id === key) {
    const { id: _dropped, ...rest } = v as Record<string, unknown>;
    v = rest;
  }
  return `- ${key} | ${JSON.stringify(v)}`;
}
