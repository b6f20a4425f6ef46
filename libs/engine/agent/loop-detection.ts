import type { ToolCall } from '../../providers';

/** A call's identity for loop detection: its name and its arguments (keys sorted). */
export function callSignature(call: Pick<ToolCall, 'name' | 'arguments'>): string {
  return `${call.name}:${stableJson(call.arguments)}`;
}

/** The calls of a reply that repeat a call of an earlier step of the same loop. */
export function repeatedCalls(calls: readonly ToolCall[], seen: ReadonlySet<string>): ToolCall[] {
  return calls.filter((c) => seen.has(callSignature(c)));
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}
