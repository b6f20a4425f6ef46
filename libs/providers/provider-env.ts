import { z } from 'zod';

const about = (description: string) => ({ description });

/**
 * The providers' variables: a protocol's key switches its calls from the offline emulator to the
 * real endpoint (`endpointFor`). docs/configuration.md lists them from this schema
 * (`npm run docs:config`); `provider-registry.ts` reads exactly these names.
 */
export const ProviderEnv = z.object({
  OPENAI_API_KEY: z
    .string()
    .optional()
    .meta(about('Sends the `openai-chat` and `openai-responses` slots to OpenAI (or `OPENAI_BASE_URL`); unset: the emulator.')),
  OPENAI_BASE_URL: z
    .string()
    .optional()
    .meta(about('An OpenAI-compatible endpoint (DeepSeek, Qwen, a local relay) for the OpenAI protocols; used with `OPENAI_API_KEY`.')),
  ANTHROPIC_API_KEY: z.string().optional().meta(about('Sends the `anthropic` slots to Anthropic (or `ANTHROPIC_BASE_URL`); unset: the emulator.')),
  ANTHROPIC_BASE_URL: z.string().optional().meta(about('Another Anthropic endpoint; used with `ANTHROPIC_API_KEY`.')),
  GEMINI_API_KEY: z.string().optional().meta(about('Sends the `gemini` slots to Google Gemini (or `GEMINI_BASE_URL`); unset: the emulator.')),
  GEMINI_BASE_URL: z.string().optional().meta(about('Another Gemini endpoint; used with `GEMINI_API_KEY`.')),
});

export type ProviderEnvName = keyof z.infer<typeof ProviderEnv>;
