/** One slot of an llm.toml written by a test or bench (OpenAI Chat on the emulator by default). */
export interface TestSlot {
  contextWindow: number;
  maxOutputTokens: number;
  model?: string;
  protocol?: string;
}

/** llm.toml text with a story and a fast slot. */
export function llmToml(slots: { story: TestSlot; fast: TestSlot }): string {
  const slot = (name: string, s: TestSlot, model: string) =>
    `[slots.${name}]\nprotocol = "${s.protocol ?? 'openai-chat'}"\nmodel = "${s.model ?? model}"\ncontextWindow = ${s.contextWindow}\nmaxOutputTokens = ${s.maxOutputTokens}\n`;
  return `${slot('story', slots.story, 'gpt-4.1-mini')}\n${slot('fast', slots.fast, 'gpt-4.1-nano')}`;
}
