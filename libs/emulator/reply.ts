import { minimalInstance } from './schema-instance';
import { emulatedStoryText } from './story-text';
import { worldCreationReply } from './world-reply';

export interface ReplyInput {
  /** Conversation as role + text, in order (for deterministic story text). */
  transcript: { role: string; content: string }[];
  tools: { name: string; parameters: unknown }[];
  /** 'auto' | 'none' | 'required' | a tool name. */
  toolChoice: string;
  /** The last input item is a tool result: answer in text. */
  afterToolResult: boolean;
  /** How many tool results the request carries (all rounds so far). */
  toolResults: number;
  /** The system prompt where the wire format keeps it apart from the messages (Anthropic, Gemini, Responses `instructions`). */
  system?: string;
  schema?: unknown;
}

export type Reply = { kind: 'text'; text: string } | { kind: 'tool'; name: string; args: unknown };

/**
 * What the emulated model answers: a forced tool is called (with the smallest valid arguments),
 * `auto` calls a tool only when the last user text names it, a world creation request (the shared
 * `world-generation` and `lore-repair` templates) a valid world or lore, an output schema gets the
 * smallest valid JSON, anything else gets deterministic story text.
 */
export function emulatedReply(input: ReplyInput): Reply {
  const world = worldCreationReply(input);
  if (world) return world;
  if (input.tools.length > 0 && !input.afterToolResult && input.toolChoice !== 'none') {
    const lastUser = [...input.transcript].reverse().find((m) => m.role === 'user')?.content ?? '';
    const forced = input.toolChoice === 'required' ? input.tools[0] : input.tools.find((t) => t.name === input.toolChoice);
    const named = input.toolChoice === 'auto' ? input.tools.find((t) => lastUser.includes(t.name)) : undefined;
    const tool = forced ?? named;
    if (tool) return { kind: 'tool', name: tool.name, args: minimalInstance(tool.parameters) ?? {} };
  }
  if (input.schema !== undefined) return { kind: 'text', text: JSON.stringify(minimalInstance(input.schema)) };
  return { kind: 'text', text: emulatedStoryText(input.transcript) };
}

export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (p && typeof p === 'object' && 'text' in p ? String((p as { text: unknown }).text) : '')).join('');
  return '';
}
