/* eslint-disable @typescript-eslint/no-require-imports -- each protocol's shapes required at first use (below) */
type OpenAIWire = typeof import('./wire-shapes-openai');

/**
 * The wire shapes the adapters send and read, as the providers' public references define them
 * (OpenAI's OpenAPI spec, Anthropic's Messages reference and streaming guide, Google's
 * generateContent reference and @google/genai types). The golden fixtures under
 * `libs/providers/test/fixtures/wire` validate against them, and so does every reply of the
 * emulator: it cannot drift from the real shapes unnoticed. Fields the adapters do not read pass
 * through; the ones they read are typed, with the counting rules the references state.
 * By protocol: `request`, `response`, and `events` (streamed events by `type`) or `chunk` (streamed chunks).
 *
 * Each protocol's schemas are built when first read, not as the library loads: only the tests and
 * the wire checks read them, and every process that loads the providers (every engine, every
 * engine test file) would otherwise build some 400 lines of zod schemas for nothing.
 */
export const WIRE_SHAPES = {
  get 'openai-chat'(): OpenAIWire['OPENAI_CHAT_WIRE'] {
    return (require('./wire-shapes-openai') as OpenAIWire).OPENAI_CHAT_WIRE;
  },
  get 'openai-responses'(): OpenAIWire['OPENAI_RESPONSES_WIRE'] {
    return (require('./wire-shapes-openai') as OpenAIWire).OPENAI_RESPONSES_WIRE;
  },
  get anthropic(): (typeof import('./wire-shapes-anthropic'))['ANTHROPIC_WIRE'] {
    return (require('./wire-shapes-anthropic') as typeof import('./wire-shapes-anthropic')).ANTHROPIC_WIRE;
  },
  get gemini(): (typeof import('./wire-shapes-gemini'))['GEMINI_WIRE'] {
    return (require('./wire-shapes-gemini') as typeof import('./wire-shapes-gemini')).GEMINI_WIRE;
  },
};
