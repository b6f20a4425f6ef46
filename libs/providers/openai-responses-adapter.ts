import type OpenAI from 'openai';
import { stripCacheBreaks } from './cache-break';
import { continuationFor } from './continuation';
import { splitLeadingSystem, wrapSystemInstruction } from './late-system';
import { capabilitiesOf } from './model-table';
import { type OpenAIAdapterOptions, openAIClient, sdkRequestOptions, toolCall } from './openai-chat-adapter';
import { StreamWatch, toProviderError } from './provider-errors';
import { openAIEffort, resolveToolChoice } from './request-preferences';
import { type ModelCall, type ModelResponse, type ProviderAdapter, ProviderError, type SendOptions } from './types';

type ResponsesBody = OpenAI.Responses.ResponseCreateParams;

/** OpenAI Responses on the official SDK: leading system → `instructions`, the rest → `input` items. */
export class OpenAIResponsesAdapter implements ProviderAdapter {
  readonly protocol = 'openai-responses' as const;
  private readonly client: OpenAI;

  constructor(private readonly options: OpenAIAdapterOptions) {
    this.client = openAIClient(options);
  }

  buildRequest(call: ModelCall): Record<string, unknown> {
    const caps = capabilitiesOf(call.model, this.options.capabilities);
    const { leading, rest } = splitLeadingSystem(call.messages);
    const input: unknown[] = [];
    for (const m of rest) {
      if (m.role === 'system') {
        input.push(
          this.options.lateSystemAsUser
            ? { role: 'user', content: [{ type: 'input_text', text: wrapSystemInstruction(m.content) }] }
            : { role: 'system', content: [{ type: 'input_text', text: stripCacheBreaks(m.content) }] },
        );
      } else if (m.role === 'user') {
        input.push({
          role: 'user',
          content: [
            { type: 'input_text', text: m.content },
            ...(m.images ?? []).map((i) => ({ type: 'input_image', image_url: `data:${i.mimeType};base64,${i.data}`, detail: 'auto' })),
          ],
        });
      } else if (m.role === 'assistant') {
        // the turn's reasoning items go back unchanged, before its message and function calls
        for (const item of continuationFor(m.continuation, 'openai-responses')?.items ?? []) input.push({ ...item });
        if (m.content) input.push({ role: 'assistant', content: [{ type: 'output_text', text: m.content }] });
        for (const c of m.toolCalls ?? []) input.push({ type: 'function_call', call_id: c.id, name: c.name, arguments: JSON.stringify(c.arguments) });
      } else {
        input.push({ type: 'function_call_output', call_id: m.toolCallId, output: m.content });
      }
    }
    const body: Record<string, unknown> = { model: call.model };
    if (leading.length) body.instructions = leading.map((m) => stripCacheBreaks(m.content)).join('\n\n');
    body.input = input;
    if (call.tools?.length) {
      body.tools = call.tools.map((t) => ({ type: 'function', name: t.name, description: t.description, parameters: t.parameters, strict: false }));
      const choice = resolveToolChoice(call, caps);
      if (choice !== undefined) body.tool_choice = typeof choice === 'string' ? choice : { type: 'function', name: choice.name };
      // a reasoning model in a tool loop: its reasoning comes back encrypted, to be carried to the next step without server state
      if (caps.reasoning === 'openai-effort') body.include = ['reasoning.encrypted_content'];
    }
    // the schema is in the system prompt (bridge) and sent again as the native field
    if (call.outputSchema) body.text = { format: { type: 'json_schema', name: call.outputSchema.name, schema: call.outputSchema.schema, strict: false } };
    const effort = openAIEffort(call, caps);
    if (effort !== undefined) body.reasoning = { effort };
    if (call.maxOutputTokens !== undefined) body.max_output_tokens = call.maxOutputTokens;
    if (call.temperature !== undefined) body.temperature = call.temperature;
    if (call.cacheKey) body.prompt_cache_key = call.cacheKey;
    if (call.stream) body.stream = true;
    return body;
  }

  async send(body: Record<string, unknown>, options: SendOptions = {}): Promise<ModelResponse> {
    const watch = body.stream === true ? new StreamWatch(options.signal) : undefined;
    try {
      if (watch) {
        const watched = watch.watch(options);
        const stream = await this.client.responses.create(body as unknown as ResponsesBody & { stream: true }, sdkRequestOptions(options));
        watch.opened = true;
        let final: OpenAI.Responses.Response | null = null;
        for await (const event of stream) {
          options.onProgress?.();
          if (event.type === 'response.output_text.delta') watched.onText?.(event.delta);
          if (event.type === 'response.completed') final = event.response;
        }
        // a cut stream is worth another try
        if (!final) throw new ProviderError('openai-responses: stream ended without response.completed', null, true);
        return fromResponse(final);
      }
      return fromResponse(await this.client.responses.create(body as unknown as ResponsesBody & { stream?: false }, sdkRequestOptions(options)));
    } catch (error) {
      throw toProviderError('openai-responses', error, watch);
    }
  }
}

function fromResponse(r: OpenAI.Responses.Response): ModelResponse {
  const text = r.output.flatMap((o) => (o.type === 'message' ? o.content.flatMap((c) => (c.type === 'output_text' ? [c.text] : [])) : [])).join('');
  const toolCalls = r.output.flatMap((o) => (o.type === 'function_call' ? [toolCall(o.call_id, o.name, o.arguments)] : []));
  const reasoning = r.output.flatMap((o) => (o.type === 'reasoning' ? [o] : []));
  const summary = reasoning.flatMap((o) => o.summary.map((p) => p.text)).join('\n\n');
  return {
    text,
    toolCalls,
    finishReason: r.status === 'incomplete' ? (r.incomplete_details?.reason ?? 'incomplete') : toolCalls.length ? 'tool_calls' : 'stop',
    usage: {
      inputTokens: r.usage?.input_tokens ?? 0,
      outputTokens: r.usage?.output_tokens ?? 0,
      cachedInputTokens: r.usage?.input_tokens_details?.cached_tokens ?? 0,
    },
    ...(summary ? { thinking: { text: summary } } : {}),
    ...(reasoning.length ? { continuation: { protocol: 'openai-responses', items: reasoning.map((o) => ({ ...o }) as Record<string, unknown>) } } : {}),
  };
}
