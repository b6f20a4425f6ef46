import type { AutomaticPrefixCache, BreakpointCache } from './prefix-cache';
import type { Reply, ReplyInput } from './reply';

export type EmulatorReply = { kind: 'json'; status: number; body: unknown } | { kind: 'sse'; events: { event?: string; data: string }[]; done?: string };

/** State shared by the routes of one emulator: each provider's simulated prompt cache. */
export interface EmulatorState {
  openAICache: AutomaticPrefixCache;
  geminiCache: AutomaticPrefixCache;
  anthropicCache: BreakpointCache;
}

/** Which call a reply is for, as far as the wire format tells. */
export interface EmulatedCall {
  protocol: 'openai-chat' | 'openai-responses' | 'anthropic' | 'gemini';
  model: string;
  /** `prompt_cache_key` (the OpenAI protocols): one per session and runtime; null when the request has none. */
  cacheKey: string | null;
}

/** One wire format the emulator speaks. */
export interface EmulatorRoute {
  method: 'POST';
  path: RegExp;
  /** Whether the request asks for a streamed answer. */
  streams(body: unknown, match: RegExpExecArray): boolean;
  /** The provider's 400 refusing a streamed request, in its error shape (the emulator's streaming fault `refuse`). */
  refuseStreaming(): EmulatorReply;
  handle(
    body: unknown,
    context: {
      state: EmulatorState;
      match: RegExpExecArray;
      headers: Record<string, string | string[] | undefined>;
      /** What the model answers: the emulator's script when it has one and answers, else `emulatedReply`. */
      reply(input: ReplyInput, call: EmulatedCall): Reply;
    },
  ): EmulatorReply;
}

/** `stream: true` in the JSON body (the OpenAI and Anthropic wire formats). */
export const streamFlag = (body: unknown) => (body as { stream?: unknown } | null)?.stream === true;

export const sse = (events: { event?: string; data: unknown }[], done?: string): EmulatorReply => ({
  kind: 'sse',
  events: events.map((e) => ({ ...(e.event ? { event: e.event } : {}), data: JSON.stringify(e.data) })),
  done,
});

/** Splits text into word-sized deltas for streaming. */
export const deltas = (text: string) => text.match(/\S+\s*/g) ?? (text ? [text] : []);
