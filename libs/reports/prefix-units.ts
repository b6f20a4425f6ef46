/**
 * A recorded request body as the provider computes its cache key: tool definitions first, then
 * the system part, then each message, each as one unit of text (spec §5 "Measuring the prefix").
 */
export interface PrefixUnit {
  kind: 'tools' | 'system' | 'message';
  /** Index among the wire messages (message units only). */
  messageIndex: number | null;
  role: string;
  text: string;
  /** Offsets into `text` where a block marked with Anthropic's `cache_control` ends (a cache boundary the adapter set). */
  cacheMarks?: number[];
}

const partText = (p: unknown): string => {
  if (!p || typeof p !== 'object') return '';
  const part = p as Record<string, unknown>;
  if (typeof part.text === 'string') return part.text;
  const { cache_control: _c, ...rest } = part;
  return JSON.stringify(rest);
};

const textOfContent = (content: unknown): string => {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map(partText).join('');
  return content === null || content === undefined ? '' : JSON.stringify(content);
};

/** Where each block carrying `cache_control` ends in the unit's text (Anthropic block arrays). */
const cacheMarksOf = (content: unknown): number[] | undefined => {
  if (!Array.isArray(content)) return undefined;
  const marks: number[] = [];
  let at = 0;
  for (const p of content) {
    at += partText(p).length;
    if (p && typeof p === 'object' && (p as Record<string, unknown>).cache_control !== undefined) marks.push(at);
  }
  return marks.length ? marks : undefined;
};

const withMarks = (unit: PrefixUnit, content: unknown): PrefixUnit => {
  const marks = cacheMarksOf(content);
  return marks ? { ...unit, cacheMarks: marks } : unit;
};

export function prefixUnits(protocol: string, body: Record<string, unknown>): PrefixUnit[] {
  const units: PrefixUnit[] = [];
  const tools = body.tools;
  if (Array.isArray(tools) && tools.length) units.push({ kind: 'tools', messageIndex: null, role: 'tools', text: JSON.stringify(tools) });
  if (protocol === 'anthropic') {
    if (body.system !== undefined) units.push(withMarks({ kind: 'system', messageIndex: null, role: 'system', text: textOfContent(body.system) }, body.system));
    (body.messages as { role: string; content: unknown }[]).forEach((m, i) =>
      units.push(withMarks({ kind: 'message', messageIndex: i, role: m.role, text: textOfContent(m.content) }, m.content)),
    );
  } else if (protocol === 'gemini') {
    const si = body.systemInstruction as { parts?: unknown[] } | undefined;
    if (si) units.push({ kind: 'system', messageIndex: null, role: 'system', text: textOfContent(si.parts) });
    (body.contents as { role: string; parts: unknown[] }[]).forEach((c, i) =>
      units.push({ kind: 'message', messageIndex: i, role: c.role, text: textOfContent(c.parts) }),
    );
  } else if (protocol === 'openai-responses') {
    if (typeof body.instructions === 'string') units.push({ kind: 'system', messageIndex: null, role: 'system', text: body.instructions });
    (body.input as Record<string, unknown>[]).forEach((m, i) =>
      units.push({
        kind: 'message',
        messageIndex: i,
        role: String(m.role ?? m.type),
        text: m.content !== undefined ? textOfContent(m.content) : JSON.stringify(m),
      }),
    );
  } else {
    (body.messages as Record<string, unknown>[]).forEach((m, i) => {
      const extra = m.tool_calls ? JSON.stringify(m.tool_calls) : '';
      units.push({
        kind: i === 0 && m.role === 'system' ? 'system' : 'message',
        messageIndex: i,
        role: String(m.role),
        text: textOfContent(m.content) + extra,
      });
    });
  }
  return units;
}
