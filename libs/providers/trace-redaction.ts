/**
 * Traces record image lengths, never bytes (spec §1 "Images that have been shown"): a copy of a
 * wire body with every inline image payload replaced by its length; the body itself (not a copy)
 * when it holds none, so `redactImageData(body) === body` tells that its trace text is the wire
 * text (`SendOptions.json`). Nothing is changed in place either way.
 */
export function redactImageData(body: Record<string, unknown>): Record<string, unknown> {
  return redact(body) as Record<string, unknown>;
}

const DATA_URL = /^data:(image\/[a-z0-9.+-]+);base64,(.*)$/is;

/** `value` with its image payloads redacted: `value` itself when it holds none (copy on write, each level). */
function redact(value: unknown, parentKey = ''): unknown {
  if (typeof value === 'string') {
    const m = DATA_URL.exec(value);
    return m ? `data:${m[1]};base64,[${base64Bytes(m[2])} bytes]` : value;
  }
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const r = redact(value[i], parentKey);
      if (r !== value[i]) (out ??= value.slice())[i] = r;
    }
    return out ?? value;
  }
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    let out: Record<string, unknown> | undefined;
    for (const [k, v] of Object.entries(o)) {
      // Anthropic { source: { type: 'base64', data } }, Gemini { inlineData: { mimeType, data } }
      const isPayload = k === 'data' && typeof v === 'string' && ((parentKey === 'source' && o.type === 'base64') || parentKey === 'inlineData');
      const r = isPayload ? `[${base64Bytes(v as string)} bytes]` : redact(v, k);
      if (r !== v) (out ??= { ...o })[k] = r;
    }
    return out ?? value;
  }
  return value;
}

function base64Bytes(b64: string): number {
  const padding = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  return Math.floor((b64.length * 3) / 4) - padding;
}
