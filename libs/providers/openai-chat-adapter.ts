import type OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionCreateParams } from 'openai/resources/chat/completions';
import { stripCacheBreaks } from './cache-break';
import { continuationFor } from './continuation';
import { wrapSystemInstruction, splitLeadingSystem } from './late-system';
import { capabilitiesOf, type ModelCapabilities } from './model-table';
import { StreamWatch, toProviderError } from './provider-errors';
import { openAIStreamBatches } from './sse-stream';
import { providerFetch } from './node-fetch';
import { openAIEffort, resolveReasoning, resolveToolChoice } from './request-preferences';
import { type ChatMessage, type ModelCall, type ModelResponse, type ProviderAdapter, ProviderError, type SendOptions, type ToolCall } from './types';

export interface OpenAIAdapterOptions {
  apiKey: string;
  baseURL?: string;
  /** Retries with exponential backoff on 408/409/429/5xx and connection errors (the SDK's own). */
  maxRetries?: number;
  timeoutMs?: number;
  /** Send system messages after the first non-system message as wrapped user content (spec §2). */
  lateSystemAsUser?: boolean;
  /** llm.toml input settings that override the model table. */
  capabilities?: Partial<ModelCapabilities>;
}

export function openAIClient(options: OpenAIAdapterOptions): OpenAI {
  // required here, not at the top: only a process with a slot on an OpenAI protocol loads the SDK
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { OpenAI } = require('openai') as typeof import('openai');
  return new OpenAI({
    apiKey: options.apiKey,
    baseURL: options.baseURL,
    maxRetries: options.maxRetries ?? 3,
    timeout: options.timeoutMs ?? 120_000,
    // over node:http, not undici's fetch: a third of a streamed call's CPU (node-fetch.ts)
    fetch: providerFetch,
  });
}

/**
 * The OpenAI SDK's options of one request: its signal, and the body's bytes when the caller gave
 * its JSON text (`SendOptions.json`): the SDK sends bytes as they are (with their
 * `content-type`, the one it gives JSON) instead of `JSON.stringify` of the body again (~10 KB a
 * call, issue 33). The request on the wire is the same: the same header fields, the same bytes.
 */
export function sdkRequestOptions(options: SendOptions): { signal?: AbortSignal; body?: Uint8Array; headers?: Record<string, string> } {
  if (options.json === undefined) return { signal: options.signal };
  return { signal: options.signal, body: Buffer.from(options.json), headers: { 'content-type': 'application/json' } };
}

/** OpenAI Chat Completions (and OpenAI-compatible endpoints: DeepSeek, Qwen, relays) on the official SDK. */
export class OpenAIChatAdapter implements ProviderAdapter {
  readonly protocol = 'openai-chat' as const;
  private readonly client: OpenAI;

  constructor(private readonly options: OpenAIAdapterOptions) {
    this.client = openAIClient(options);
  }

  buildRequest(call: ModelCall): Record<string, unknown> {
    const caps = capabilitiesOf(call.model, this.options.capabilities);
    const { leading, rest } = splitLeadingSystem(call.messages);
    const messages: unknown[] = leading.map((m) => ({ role: 'system', content: stripCacheBreaks(m.content) }));
    for (const m of rest) {
      if (m.role === 'system') {
        messages.push(
          this.options.lateSystemAsUser
            ? { role: 'user', content: wrapSystemInstruction(m.content) }
            : { role: 'system', content: stripCacheBreaks(m.content) },
        );
      } else if (m.role === 'user') {
        messages.push({
          role: 'user',
          content: m.images?.length
            ? [{ type: 'text', text: m.content }, ...m.images.map((i) => ({ type: 'image_url', image_url: { url: `data:${i.mimeType};base64,${i.data}` } }))]
            : m.content,
        });
      } else if (m.role === 'assistant') {
        messages.push({
          role: 'assistant',
          content: m.content || null,
          ...reasoningContentOf(m, caps.family),
          ...(m.toolCalls?.length
            ? { tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } })) }
            : {}),
        });
      } else {
        messages.push({ role: 'tool', tool_call_id: m.toolCallId, content: m.content });
      }
    }
    // no native response_format for call.outputSchema: the bridge writes the schema into the system
    // prompt and only Responses and Gemini also send it natively (spec §5, prompt-structure.md "counted twice")
    const body: Record<string, unknown> = { model: call.model, messages };
    if (call.tools?.length) {
      body.tools = call.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }));
      const choice = resolveToolChoice(call, caps);
      if (choice !== undefined) body.tool_choice = typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
    }
    const reasoning = resolveReasoning(call, caps);
    if (reasoning.kind !== 'omit') {
      const on = reasoning.kind === 'on';
      if (caps.reasoning === 'qwen-enable-thinking') body.enable_thinking = on;
      if (caps.reasoning === 'deepseek-thinking') {
        body.thinking = { type: on ? 'enabled' : 'disabled' };
        if (on && reasoning.effort) body.reasoning_effort = reasoning.effort === 'medium' ? 'high' : reasoning.effort;
      }
    }
    const effort = openAIEffort(call, caps);
    if (effort !== undefined) body.reasoning_effort = effort;
    if (call.maxOutputTokens !== undefined) body.max_completion_tokens = call.maxOutputTokens;
    if (call.temperature !== undefined) body.temperature = call.temperature;
    if (call.cacheKey) body.prompt_cache_key = call.cacheKey;
    if (call.stream) {
      body.stream = true;
      body.stream_options = { include_usage: true };
    }
    return body;
  }

  async send(body: Record<string, unknown>, options: SendOptions = {}): Promise<ModelResponse> {
    const watch = body.stream === true ? new StreamWatch(options.signal) : undefined;
    try {
      if (watch) return await this.sendStreaming(body, watch.watch(options), watch);
      const completion = await this.client.chat.completions.create(
        body as unknown as ChatCompletionCreateParams & { stream?: false },
        sdkRequestOptions(options),
      );
      const choice = completion.choices[0];
      return {
        text: choice?.message?.content ?? '',
        toolCalls: (choice?.message?.tool_calls ?? []).flatMap((c) => (c.type === 'function' ? [toolCall(c.id, c.function.name, c.function.arguments)] : [])),
        finishReason: choice?.finish_reason ?? null,
        usage: mapUsage(completion.usage),
        ...withReasoningContent((choice?.message as { reasoning_content?: string | null } | undefined)?.reasoning_content),
      };
    } catch (error) {
      throw toProviderError('openai-chat', error, watch);
    }
  }

  private async sendStreaming(body: Record<string, unknown>, options: SendOptions, watch: StreamWatch): Promise<ModelResponse> {
    // the SDK sends the request (its retries, its errors by status); the events are read here (`openAIStreamItems`: as the SDK's `Stream` reads them, at a fraction of its CPU),
    // a read's chunks at a time (`openAIStreamBatches`: one async step per read, not per chunk)
    const response = await this.client.chat.completions
      .create(body as unknown as ChatCompletionCreateParams & { stream: true }, sdkRequestOptions(options))
      .asResponse();
    watch.opened = true;
    const batches = openAIStreamBatches<ChatCompletionChunk>(response);
    let chunks = 0;
    let text = '';
    let reasoning: string | undefined;
    let finishReason: string | null = null;
    let usage = mapUsage(undefined);
    const calls = new Map<number, { id: string; name: string; args: string }>();
    for await (const batch of batches)
      for (const chunk of batch) {
        options.onProgress?.();
        chunks++;
        const choice = chunk.choices[0];
        const reasoningDelta = (choice?.delta as { reasoning_content?: string | null } | undefined)?.reasoning_content;
        if (typeof reasoningDelta === 'string') reasoning = (reasoning ?? '') + reasoningDelta;
        const delta = choice?.delta?.content ?? '';
        if (delta) {
          text += delta;
          options.onText?.(delta);
        }
        for (const tc of choice?.delta?.tool_calls ?? []) {
          const c = calls.get(tc.index) ?? { id: '', name: '', args: '' };
          c.id ||= tc.id ?? '';
          c.name ||= tc.function?.name ?? '';
          c.args += tc.function?.arguments ?? '';
          calls.set(tc.index, c);
        }
        if (choice?.finish_reason) finishReason = choice.finish_reason;
        if (chunk.usage) usage = mapUsage(chunk.usage);
      }
    // the SDK ends an aborted stream without an error (its iterator swallows the abort): what came is not the answer
    if (options.signal?.aborted) throw new ProviderError('openai-chat: the call was aborted mid-stream', null, false);
    // the SDK ends a stream cut before its first chunk without an error: nothing was answered
    if (chunks === 0) throw new ProviderError('openai-chat: the stream ended without a chunk', null, true);
    return { text, toolCalls: [...calls.values()].map((c) => toolCall(c.id, c.name, c.args)), finishReason, usage, ...withReasoningContent(reasoning) };
  }
}

/** DeepSeek / Qwen `reasoning_content`: readable thinking, and the continuation that carries it back. */
function withReasoningContent(reasoning: string | null | undefined): Pick<ModelResponse, 'thinking' | 'continuation'> {
  if (typeof reasoning !== 'string' || reasoning === '') return {};
  return { thinking: { text: reasoning }, continuation: { protocol: 'openai-chat', reasoningContent: reasoning } };
}

/** An assistant message's reasoning_content: its own continuation, else (DeepSeek) its thinking text. */
function reasoningContentOf(m: ChatMessage, family: ModelCapabilities['family']): { reasoning_content?: string } {
  const carried = continuationFor(m.continuation, 'openai-chat');
  if (carried) return { reasoning_content: carried.reasoningContent };
  return m.thinking && family === 'deepseek' ? { reasoning_content: m.thinking.text } : {};
}

export function toolCall(id: string, name: string, args: string): ToolCall {
  let parsed: Record<string, unknown> = {};
  try {
    parsed = args ? (JSON.parse(args) as Record<string, unknown>) : {};
  } catch {
    parsed = { _unparsed: args };
  }
  return { id, name, arguments: parsed };
}

function mapUsage(usage: (OpenAI.CompletionUsage & { prompt_cache_hit_tokens?: number }) | undefined | null): ModelResponse['usage'] {
  return {
    inputTokens: usage?.prompt_tokens ?? 0,
    outputTokens: usage?.completion_tokens ?? 0,
    cachedInputTokens: usage?.prompt_tokens_details?.cached_tokens ?? usage?.prompt_cache_hit_tokens ?? 0,
  };
}
