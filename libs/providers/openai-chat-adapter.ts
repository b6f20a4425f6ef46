import OpenAI from 'openai';
import type { ChatCompletionCreateParams } from 'openai/resources/chat/completions';
import { stripCacheBreaks } from './cache-break';
import { ModelCall, ModelResponse, ProviderAdapter, ProviderError, SendOptions } from './types';

export interface OpenAIChatOptions {
  apiKey: string;
  baseURL?: string;
  /** Retries with exponential backoff on 408/409/429/5xx and connection errors (the SDK's own). */
  maxRetries?: number;
  timeoutMs?: number;
}

/** OpenAI Chat Completions (and OpenAI-compatible endpoints) on the official `openai` SDK. */
export class OpenAIChatAdapter implements ProviderAdapter {
  readonly protocol = 'openai-chat';
  private readonly client: OpenAI;

  constructor(options: OpenAIChatOptions) {
    this.client = new OpenAI({
      apiKey: options.apiKey,
      baseURL: options.baseURL,
      maxRetries: options.maxRetries ?? 3,
      timeout: options.timeoutMs ?? 120_000,
    });
  }

  buildRequest(call: ModelCall): Record<string, unknown> {
    const body: Record<string, unknown> = {
      model: call.model,
      messages: call.messages.map((m) => ({ role: m.role, content: stripCacheBreaks(m.content) })),
    };
    if (call.maxOutputTokens !== undefined) body.max_completion_tokens = call.maxOutputTokens;
    if (call.temperature !== undefined) body.temperature = call.temperature;
    if (call.stream) {
      body.stream = true;
      body.stream_options = { include_usage: true };
    }
    return body;
  }

  async send(body: Record<string, unknown>, options: SendOptions = {}): Promise<ModelResponse> {
    try {
      if (body.stream === true) return await this.sendStreaming(body, options);
      const completion = await this.client.chat.completions.create(
        body as unknown as ChatCompletionCreateParams & { stream?: false },
        { signal: options.signal },
      );
      const choice = completion.choices[0];
      return {
        text: choice?.message?.content ?? '',
        finishReason: choice?.finish_reason ?? null,
        usage: mapUsage(completion.usage),
      };
    } catch (error) {
      throw toProviderError(error);
    }
  }

  private async sendStreaming(body: Record<string, unknown>, options: SendOptions): Promise<ModelResponse> {
    const stream = await this.client.chat.completions.create(
      body as unknown as ChatCompletionCreateParams & { stream: true },
      { signal: options.signal },
    );
    let text = '';
    let finishReason: string | null = null;
    let usage: ModelResponse['usage'] = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 };
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      const delta = choice?.delta?.content ?? '';
      if (delta) {
        text += delta;
        options.onText?.(delta);
      }
      if (choice?.finish_reason) finishReason = choice.finish_reason;
      if (chunk.usage) usage = mapUsage(chunk.usage);
    }
    return { text, finishReason, usage };
  }
}

function mapUsage(usage: OpenAI.CompletionUsage | undefined | null): ModelResponse['usage'] {
  return {
    inputTokens: usage?.prompt_tokens ?? 0,
    outputTokens: usage?.completion_tokens ?? 0,
    cachedInputTokens: usage?.prompt_tokens_details?.cached_tokens ?? 0,
  };
}

function toProviderError(error: unknown): ProviderError {
  if (error instanceof ProviderError) return error;
  if (error instanceof OpenAI.APIError) {
    const status = error.status ?? null;
    const retryable = status === null || status === 408 || status === 409 || status === 429 || status >= 500;
    return new ProviderError(`openai-chat: ${error.message}`, status, retryable);
  }
  return new ProviderError(`openai-chat: ${error instanceof Error ? error.message : String(error)}`, null, true);
}
