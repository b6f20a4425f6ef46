import type { ChatMessage } from '../../providers';

/** A system prompt of ~2,400 tokens by the emulator's count: over every provider's cache minimum. */
export const LONG_SYSTEM = 'The ember road winds past the sleeping dragon. '.repeat(200);

/** The long system prompt, `n` earlier turns and the next input (the end of the history: Anthropic's history boundary). */
export const storyTurns = (n: number): ChatMessage[] => [
  { role: 'system', content: LONG_SYSTEM },
  ...Array.from({ length: n }, (_, i) => [
    { role: 'user' as const, content: `input ${i}` },
    { role: 'assistant' as const, content: `story ${i}` },
  ]).flat(),
  { role: 'user', content: `input ${n}`, endsHistory: true },
];
