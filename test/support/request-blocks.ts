/** The texts of a recorded request's messages (string or text-block content). */
export function messageTexts(body: string): string[] {
  const parsed = JSON.parse(body) as { messages: { content: string | { text?: string }[] }[] };
  return parsed.messages.map((m) => (typeof m.content === 'string' ? m.content : m.content.map((p) => p.text ?? '').join('')));
}

/** The JSON inside `<name>` … `</name>` of a recorded request's messages (unescaped), or undefined when no message holds the block. */
export function dataBlock(body: string, name: string): unknown {
  const text = messageTexts(body).find((t) => t.includes(`<${name}>`));
  if (!text) return undefined;
  const inner = new RegExp(`<${name}>\\n([\\s\\S]*?)\\n</${name}>`).exec(text)![1];
  return JSON.parse(inner.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')) as unknown;
}
