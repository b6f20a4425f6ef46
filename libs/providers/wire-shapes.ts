import { ANTHROPIC_WIRE } from './wire-shapes-anthropic';
import { GEMINI_WIRE } from './wire-shapes-gemini';
import { OPENAI_CHAT_WIRE, OPENAI_RESPONSES_WIRE } from './wire-shapes-openai';

/**
 * The wire shapes the adapters send and read, as the providers' public references define them
 * (OpenAI's OpenAPI spec, Anthropic's Messages reference and streaming guide, Google's
 * generateContent reference and @google/genai types). The golden fixtures under
 * `libs/providers/test/fixtures/wire` validate against them, and so does every reply of the
 * emulator: it cannot drift from the real shapes unnoticed. Fields the adapters do not read pass
 * through; the ones they read are typed, with the counting rules the references state.
 * By protocol: `request`, `response`, and `events` (streamed events by `type`) or `chunk` (streamed chunks).
 */
export const WIRE_SHAPES = {
  'openai-chat': OPENAI_CHAT_WIRE,
  'openai-responses': OPENAI_RESPONSES_WIRE,
  anthropic: ANTHROPIC_WIRE,
  gemini: GEMINI_WIRE,
} as const;
