/** Spec §4 "Data boundary": what the kernel writes into the prompt carries no bookkeeping fields. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;
const DROPPED_KEYS = new Set(['sessionId', 'updatedAt', 'createdAt']);

const isBookkeeping = (v: unknown) => typeof v === 'string' && (UUID.test(v) || ISO_TIME.test(v));

/** Removes UUIDs, ISO times and sessionId recursively; readable ids and story fields stay. */
export function modelFacingJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.filter((v) => !isBookkeeping(v)).map(modelFacingJson);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (DROPPED_KEYS.has(k) || isBookkeeping(v)) continue;
      out[k] = modelFacingJson(v);
    }
    return out;
  }
  return value;
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
