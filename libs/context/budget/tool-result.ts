/** A tool result's content read as JSON: an object envelope, another JSON value, or plain text. */
export type ParsedResult = { kind: 'object'; value: Record<string, unknown> } | { kind: 'json'; value: unknown } | { kind: 'text' };

export function parseResult(content: string): ParsedResult {
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    return { kind: 'text' };
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) return { kind: 'object', value: value as Record<string, unknown> };
  // A JSON string is a string result; numbers, booleans, null and arrays are non-string results.
  return typeof value === 'string' ? { kind: 'text' } : { kind: 'json', value };
}

/**
 * An envelope's summary: its `summary` member, else the `summary` string of its `data` object (a
 * plugin tool's returned object is the engine envelope's `data`: `{ "ok": true, "data": { "summary": … } }`).
 */
export function envelopeSummary(envelope: Record<string, unknown>): string | undefined {
  if (typeof envelope['summary'] === 'string') return envelope['summary'];
  const data = envelope['data'];
  if (data !== null && typeof data === 'object' && !Array.isArray(data)) {
    const inner = (data as Record<string, unknown>)['summary'];
    if (typeof inner === 'string') return inner;
  }
  return undefined;
}

/** The summary of a tool result's content (a JSON envelope's, see `envelopeSummary`); none for other content. */
export function toolResultSummary(content: string): string | undefined {
  const parsed = parseResult(content);
  return parsed.kind === 'object' ? envelopeSummary(parsed.value) : undefined;
}
