/**
 * What the emulator's automatic prefix caches (OpenAI Chat and Responses, Gemini implicit) compare:
 * the request as one text, tool definitions first, and the key its cache entries live under. One
 * definition for the routes and for anyone who replays recorded requests through the same cache
 * model (the Emberback bench's cache bound): the two cannot drift apart.
 */
export interface CacheText {
  key: string;
  prompt: string;
}

interface ChatBody {
  model: string;
  tools?: unknown[];
  messages: unknown[];
  prompt_cache_key?: string;
}

interface ResponsesBody {
  model: string;
  tools?: unknown[];
  instructions?: string;
  input: string | unknown[];
  prompt_cache_key?: string;
}

interface GeminiBody {
  tools?: unknown[];
  systemInstruction?: unknown;
  contents: unknown[];
}

/** OpenAI Chat Completions: routed by model and `prompt_cache_key`. */
export function openAIChatCacheText(body: ChatBody): CacheText {
  return {
    key: `${body.model}|${body.prompt_cache_key ?? ''}`,
    prompt: JSON.stringify(body.tools ?? []) + body.messages.map((m) => JSON.stringify(m)).join(''),
  };
}

/** OpenAI Responses: routed by model and `prompt_cache_key`; a string `input` is one user item. */
export function openAIResponsesCacheText(body: ResponsesBody): CacheText {
  const items = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;
  return {
    key: `${body.model}|${body.prompt_cache_key ?? ''}`,
    prompt: JSON.stringify(body.tools ?? []) + JSON.stringify(body.instructions ?? '') + items.map((i) => JSON.stringify(i)).join(''),
  };
}

/** Gemini generateContent: the model comes from the URL, not the body. */
export function geminiCacheText(model: string, body: GeminiBody): CacheText {
  return {
    key: model,
    prompt: JSON.stringify(body.tools ?? []) + JSON.stringify(body.systemInstruction ?? null) + body.contents.map((c) => JSON.stringify(c)).join(''),
  };
}

/**
 * A recorded request body (the JSON sent on the wire) as its automatic cache sees it; null for
 * Anthropic, whose cache reads at explicit breakpoints (`BreakpointCache`), not a longest prefix.
 */
export function automaticCacheText(protocol: string, model: string, body: Record<string, unknown>): CacheText | null {
  if (protocol === 'openai-chat') return openAIChatCacheText(body as unknown as ChatBody);
  if (protocol === 'openai-responses') return openAIResponsesCacheText(body as unknown as ResponsesBody);
  if (protocol === 'gemini') return geminiCacheText(model, body as unknown as GeminiBody);
  return null;
}
