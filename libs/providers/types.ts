import { EngineError } from '../errors';
import type { Continuation } from './continuation';
/** Provider-neutral shapes the engine hands to an adapter and gets back. */

export interface InlineImage {
  mimeType: 'image/png' | 'image/jpeg' | 'image/webp' | 'image/gif';
  /** base64 of the raw bytes. */
  data: string;
}

export interface ToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** user messages: inline images. */
  images?: InlineImage[];
  /** assistant messages: tool calls made in this reply. */
  toolCalls?: ToolCall[];
  /** assistant messages: reasoning to replay (never carries a cache boundary). */
  thinking?: { text: string; signature?: string };
  /**
   * assistant messages: the `continuation` of the ModelResponse this message records, carried back
   * unchanged by the adapter of the same protocol (it wins over `thinking` there; another
   * protocol's adapter ignores it).
   */
  continuation?: Continuation;
  /** tool messages: which call this answers. */
  toolCallId?: string;
  toolName?: string;
  /**
   * The last message of the history (before the current turn). With cache boundaries, Anthropic
   * sets the history breakpoint on it (spec §5); other protocols ignore it.
   */
  endsHistory?: boolean;
}

export interface ToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

/** Explicit reasoning configuration (player slot override or preset). */
export interface ReasoningSetting {
  enabled: boolean;
  effort?: 'low' | 'medium' | 'high';
}

export interface ModelCall {
  model: string;
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  /** The output schema (the bridge also writes it into the system prompt). */
  outputSchema?: { name: string; schema: Record<string, unknown> };
  maxOutputTokens?: number;
  temperature?: number;
  stream?: boolean;
  /** Runtime request preferences (`agent.reasoning`, `agent.toolChoice`), spec §3. */
  preferences?: { reasoning?: false; toolChoice?: 'required' | { name: string } };
  /** Player slot overrides / preset metadata: these win over the preferences. */
  overrides?: { toolChoice?: ToolChoice; reasoning?: ReasoningSetting };
  /** prompt_cache_key for the OpenAI protocols, derived per session and runtime. */
  cacheKey?: string;
  /** Anthropic: turn the system sentinels into cache_control blocks and set message boundaries. */
  cacheBoundaries?: boolean;
}

export interface Usage {
  /** All input tokens, cached or not. */
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  /** Anthropic: tokens written to the cache by this request. */
  cacheCreationInputTokens?: number;
}

export interface ModelResponse {
  text: string;
  toolCalls: ToolCall[];
  finishReason: string | null;
  usage: Usage;
  /**
   * The reply's reasoning as readable text, when the provider returns any (Anthropic thinking,
   * Responses summaries, Gemini thought parts, DeepSeek reasoning_content). `signature`: Anthropic,
   * when the reply has exactly one thinking block. Shape of ChatMessage.thinking.
   */
  thinking?: { text: string; signature?: string };
  /**
   * What the protocol needs back on the next request of the loop (see Continuation): copy it onto
   * the assistant ChatMessage that records this reply. Absent when there is nothing to carry.
   */
  continuation?: Continuation;
}

export interface SendOptions {
  signal?: AbortSignal;
  /** Called with each text delta of a streamed reply. */
  onText?: (delta: string) => void;
  /** Called with each event of a streamed reply, whatever it carries (the idle deadline's clock: `DeadlineAdapter`). */
  onProgress?: () => void;
  /**
   * `JSON.stringify(body)`, when the caller made it already (the engine records that text in
   * `llm.calling@1`): an adapter whose SDK would serialize the body again sends these bytes
   * instead (the same bytes). It must be exactly that text; an adapter may ignore it.
   */
  json?: string;
}

/**
 * An adapter first builds the exact wire body (which the engine records in `llm.calling`),
 * then sends that same body.
 */
export interface ProviderAdapter {
  readonly protocol: Protocol;
  buildRequest(call: ModelCall): Record<string, unknown>;
  send(body: Record<string, unknown>, options?: SendOptions): Promise<ModelResponse>;
}

export type Protocol = 'openai-chat' | 'openai-responses' | 'anthropic' | 'gemini';

/**
 * Why a streamed call failed where the same request without streaming may not (`StreamWatch`):
 * the provider refused streaming, or the stream broke before any text arrived.
 */
export type StreamFailure = 'refused' | 'broken';

/** A provider call failed after the adapter's retries: retryable ones are `unavailable`, the rest `invalid` (permanent). */
export class ProviderError extends EngineError {
  constructor(
    message: string,
    readonly status: number | null,
    readonly retryable: boolean,
    /** Set when the call was streamed and a call without streaming may succeed (the engine's non-streaming fallback). */
    readonly stream?: StreamFailure,
  ) {
    super(message);
  }
  get code(): string {
    return this.status ? `PROVIDER_${this.status}` : 'PROVIDER_ERROR';
  }
  get category(): 'unavailable' | 'invalid' {
    return this.retryable ? 'unavailable' : 'invalid';
  }
}
