import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { PROVIDER_CACHE_BREAK as CACHE_BREAK } from '../providers';
import { estimateTokens } from '../text';
import { chatLoopError, deepSeekThinking } from './openai-chat-checks';
import { emulatedReasoning } from './reasoning';
import { rejectEffort } from './openai-reasoning';
import { textOf } from './reply';
import { truncateText } from '../text';
import { deltas, type EmulatorReply, type EmulatorRoute, sse, streamFlag } from './route';
import { openAIChatCacheText } from './cache-text';
import { schemaInText } from './schema-instance';

const ChatBody = z
  .object({
    model: z.string().min(1),
    messages: z
      .array(
        z
          .object({
            role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
            content: z.union([z.string(), z.array(z.object({ type: z.string() }).passthrough()), z.null()]).optional(),
          })
          .passthrough(),
      )
      .min(1),
    tools: z
      .array(z.object({ type: z.literal('function'), function: z.object({ name: z.string(), parameters: z.unknown().optional() }).passthrough() }))
      .optional(),
    tool_choice: z
      .union([z.enum(['auto', 'none', 'required']), z.object({ type: z.literal('function'), function: z.object({ name: z.string() }) })])
      .optional(),
    stream: z.boolean().optional(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).optional(),
    max_completion_tokens: z.number().int().positive().optional(),
    max_tokens: z.number().int().positive().optional(),
    prompt_cache_key: z.string().optional(),
    reasoning_effort: z.string().optional(),
    thinking: z
      .object({ type: z.enum(['enabled', 'disabled']) })
      .passthrough()
      .optional(),
  })
  .passthrough();

/** OpenAI's refusal of a streamed request (what an organization that is not verified for a model gets). */
export const openAIStreamingRefused = () =>
  openAIError(
    400,
    'Your organization must be verified to stream this model. Please go to: https://platform.openai.com/settings/organization/general and click on Verify Organization. If you just verified, it can take up to 15 minutes for access to propagate.',
    'stream',
    'unsupported_value',
  );

export function openAIError(status: number, message: string, param: string | null, code: string | null = null): EmulatorReply {
  return { kind: 'json', status, body: { error: { message, type: 'invalid_request_error', param, code } } };
}

/** POST /v1/chat/completions in the Chat Completions wire format, streaming and not. */
export const openAIChatRoute: EmulatorRoute = {
  method: 'POST',
  path: /^\/v1\/chat\/completions$/,
  streams: streamFlag,
  refuseStreaming: openAIStreamingRefused,
  handle(raw, { state, reply: answer }) {
    const parsed = ChatBody.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return openAIError(400, `Invalid request: ${issue.message}`, issue.path.join('.') || null);
    }
    const body = parsed.data;
    if (JSON.stringify(body.messages).includes(CACHE_BREAK)) return openAIError(400, 'Invalid request: internal cache marker leaked into messages', 'messages');
    const badEffort = rejectEffort(body.model, body.reasoning_effort, 'reasoning_effort');
    if (badEffort) return openAIError(400, badEffort.message, badEffort.param, badEffort.code);
    const thinking = deepSeekThinking(body.model, body.thinking);
    const loopError = chatLoopError(body.messages, thinking);
    if (loopError) return openAIError(400, loopError.message, loopError.param);
    const transcript = body.messages.map((m) => ({ role: m.role, content: textOf(m.content) }));
    const toolResults = body.messages.filter((m) => m.role === 'tool').length;
    const choice = typeof body.tool_choice === 'object' ? body.tool_choice.function.name : (body.tool_choice ?? 'auto');
    const reply = answer(
      {
        transcript,
        tools: (body.tools ?? []).map((t) => ({ name: t.function.name, parameters: t.function.parameters })),
        toolChoice: choice,
        afterToolResult: body.messages[body.messages.length - 1].role === 'tool',
        toolResults,
        schema: schemaInText(
          transcript
            .filter((m) => m.role === 'system')
            .map((m) => m.content)
            .join('\n'),
        ),
      },
      { protocol: 'openai-chat', model: body.model, cacheKey: body.prompt_cache_key ?? null },
    );
    const { key, prompt } = openAIChatCacheText(body);
    const promptTokens = estimateTokens(prompt);
    const cached = state.openAICache.lookup(key, prompt);
    let text = reply.kind === 'text' ? reply.text : '';
    let finish = reply.kind === 'tool' ? 'tool_calls' : 'stop';
    const limit = body.max_completion_tokens ?? body.max_tokens;
    if (limit !== undefined && estimateTokens(text) > limit) {
      text = truncateText(text, limit * 4);
      finish = 'length';
    }
    const toolCalls =
      reply.kind === 'tool'
        ? [{ id: `call_${randomUUID().slice(0, 8)}`, type: 'function', function: { name: reply.name, arguments: JSON.stringify(reply.args) } }]
        : undefined;
    // DeepSeek thinking: the reasoning comes as reasoning_content, before the answer
    const reasoning = thinking ? emulatedReasoning(transcript, toolResults) : undefined;
    const completionTokens = estimateTokens(reasoning ?? '') + estimateTokens(text) + (toolCalls ? estimateTokens(toolCalls[0].function.arguments) : 0);
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
      prompt_tokens_details: { cached_tokens: cached },
      completion_tokens_details: { reasoning_tokens: 0 },
    };
    const id = `chatcmpl-${randomUUID()}`;
    const created = Math.floor(Date.now() / 1000);
    if (!body.stream) {
      return {
        kind: 'json',
        status: 200,
        body: {
          id,
          object: 'chat.completion',
          created,
          model: body.model,
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: toolCalls ? null : text,
                refusal: null,
                ...(reasoning !== undefined ? { reasoning_content: reasoning } : {}),
                ...(toolCalls ? { tool_calls: toolCalls } : {}),
              },
              finish_reason: finish,
              logprobs: null,
            },
          ],
          usage,
        },
      };
    }
    // with include_usage every chunk carries usage: null, and one more chunk (no choices) the usage
    const withUsage = body.stream_options?.include_usage === true;
    const base = { id, object: 'chat.completion.chunk', created, model: body.model, ...(withUsage ? { usage: null } : {}) };
    const events: { data: unknown }[] = [{ data: { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] } }];
    for (const word of deltas(reasoning ?? ''))
      events.push({ data: { ...base, choices: [{ index: 0, delta: { reasoning_content: word }, finish_reason: null }] } });
    for (const word of deltas(text)) events.push({ data: { ...base, choices: [{ index: 0, delta: { content: word }, finish_reason: null }] } });
    if (toolCalls) events.push({ data: { ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, ...toolCalls[0] }] }, finish_reason: null }] } });
    events.push({ data: { ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }] } });
    if (withUsage) events.push({ data: { ...base, choices: [], usage } });
    return sse(events, '[DONE]');
  },
};
