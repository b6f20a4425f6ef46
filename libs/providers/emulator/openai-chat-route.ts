import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { emulatorTokenCount } from './estimate';
import type { EmulatorReply, EmulatorRoute } from './route';
import { emulatedStoryText } from './story-text';

const ContentPart = z.object({ type: z.string() }).passthrough();
const ChatBody = z.object({
  model: z.string().min(1),
  messages: z
    .array(
      z.object({
        role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
        content: z.union([z.string(), z.array(ContentPart), z.null()]).optional(),
      }).passthrough(),
    )
    .min(1),
  stream: z.boolean().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).optional(),
  max_completion_tokens: z.number().int().positive().optional(),
  max_tokens: z.number().int().positive().optional(),
}).passthrough();

function openAIError(status: number, message: string, param: string | null): EmulatorReply {
  return { kind: 'json', status, body: { error: { message, type: 'invalid_request_error', param, code: null } } };
}

/** POST /v1/chat/completions in the Chat Completions wire format, streaming and not. */
export const openAIChatRoute: EmulatorRoute = {
  method: 'POST',
  path: '/v1/chat/completions',
  handle(raw) {
    const parsed = ChatBody.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return openAIError(400, `Invalid request: ${issue.message}`, issue.path.join('.') || null);
    }
    const body = parsed.data;
    const limit = body.max_completion_tokens ?? body.max_tokens;
    let text = emulatedStoryText(body.messages);
    let finish = 'stop';
    if (limit !== undefined && emulatorTokenCount(text) > limit) {
      text = text.slice(0, limit * 4);
      finish = 'length';
    }
    const promptTokens = emulatorTokenCount(JSON.stringify(body.messages));
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: emulatorTokenCount(text),
      total_tokens: promptTokens + emulatorTokenCount(text),
      prompt_tokens_details: { cached_tokens: 0 },
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
          choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, finish_reason: finish, logprobs: null }],
          usage,
        },
      };
    }
    const base = { id, object: 'chat.completion.chunk', created, model: body.model };
    const words = text.match(/\S+\s*/g) ?? [];
    const events: unknown[] = [{ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }];
    for (const word of words) events.push({ ...base, choices: [{ index: 0, delta: { content: word }, finish_reason: null }] });
    events.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }] });
    if (body.stream_options?.include_usage) events.push({ ...base, choices: [], usage });
    return { kind: 'sse', events: events.map((e) => ({ data: JSON.stringify(e) })), done: '[DONE]' };
  },
};
