/** The smallest value that satisfies a JSON schema (the emulator's answer to an output schema or tool). */
export function minimalInstance(schema: unknown): unknown {
  if (!schema || typeof schema !== 'object') return null;
  const s = schema as Record<string, unknown>;
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0];
  for (const key of ['anyOf', 'oneOf'] as const) if (Array.isArray(s[key])) return minimalInstance((s[key] as unknown[])[0]);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, unknown>;
      const required = Array.isArray(s.required) ? (s.required as string[]) : Object.keys(props);
      return Object.fromEntries(required.map((k) => [k, minimalInstance(props[k])]));
    }
    case 'array':
      return Array.from({ length: Number(s.minItems ?? 0) }, () => minimalInstance(s.items));
    case 'string':
      return 'x'.repeat(Math.max(1, Number(s.minLength ?? 1)));
    case 'integer':
    case 'number':
      return Number(s.minimum ?? 1);
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return s.properties ? minimalInstance({ ...s, type: 'object' }) : null;
  }
}

/** An output schema the bridge wrote into the system prompt as <output-schema>…</output-schema>. */
export function schemaInText(text: string): unknown | undefined {
  const m = /<output-schema>\s*([\s\S]*?)\s*<\/output-schema>/.exec(text);
  if (!m) return undefined;
  try {
    return JSON.parse(m[1].replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&'));
  } catch {
    return undefined;
  }
}
