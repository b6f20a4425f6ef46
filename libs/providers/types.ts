/** Provider-neutral shapes the engine hands to an adapter and gets back. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ModelCall {
  model: string;
  messages: ChatMessage[];
  maxOutputTokens?: number;
  temperature?: number;
  stream?: boolean;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
}

export interface ModelResponse {
  text: string;
  finishReason: string | null;
  usage: Usage;
}

export interface SendOptions {
  signal?: AbortSignal;
  /** Called with each text delta of a streamed reply. */
  onText?: (delta: string) => void;
}

/**
 * An adapter first builds the exact wire body (which the engine records in `llm.calling`),
 * then sends that same body.
 */
export interface ProviderAdapter {
  readonly protocol: string;
  buildRequest(call: ModelCall): Record<string, unknown>;
  send(body: Record<string, unknown>, options?: SendOptions): Promise<ModelResponse>;
}

/** A provider call failed after the adapter's retries. */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}
