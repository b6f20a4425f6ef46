import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { PROVIDER_CACHE_BREAK as CACHE_BREAK } from '../providers';
import { estimateTokens } from '../text';
import { openAIError, openAIStreamingRefused } from './openai-chat-route';
import { encryptedReasoning, reasoningModel, responsesLoopError } from './openai-responses-checks';
import { emulatedReasoning, signReasoning } from './reasoning';
import { rejectEffort } from './openai-reasoning';
import { textOf } from './reply';
import { deltas, type EmulatorRoute, sse, streamFlag } from './route';
import { openAIResponsesCacheText } from './cache-text';
import { schemaInText } from './schema-instance';

const Item = z.object({ type: z.string().optional(), role: z.string().optional(), content: z.unknown().optional() }).passthrough();
const ResponsesBody = z
  .object({
    model: z.string().min(1),
    instructions: z.string().optional(),
    input: z.union([z.string(), z.array(Item)]),
    tools: z.array(z.object({ type: z.literal('function'), name: z.string(), parameters: z.unknown().optional() }).passthrough()).optional(),
    tool_choice: z.union([z.enum(['auto', 'none', 'required']), z.object({ type: z.literal('function'), name: z.string() })]).optional(),
    text: z
      .object({ format: z.object({ type: z.string(), schema: z.unknown().optional() }).passthrough() })
      .passthrough()
      .optional(),
    stream: z.boolean().optional(),
    prompt_cache_key: z.string().optional(),
    max_output_tokens: z.number().int().positive().optional(),
    reasoning: z.object({ effort: z.string().optional(), summary: z.string().optional() }).passthrough().optional(),
    include: z.array(z.string()).optional(),
  })
  .passthrough();

/** POST /v1/responses: the Responses wire format, streaming and not, with automatic caching. */
export const openAIResponsesRoute: EmulatorRoute = {
  method: 'POST',
  path: /^\/v1\/responses$/,
  streams: streamFlag,
  refuseStreaming: openAIStreamingRefused,
  handle(raw, { state, reply: answer }) {
    const parsed = ResponsesBody.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return openAIError(400, `Invalid request: ${issue.message}`, issue.path.join('.') || null);
    }
    const body = parsed.data;
    if (JSON.stringify(body).includes(CACHE_BREAK)) return openAIError(400, 'Invalid request: internal cache marker leaked', 'input');
    const badEffort = rejectEffort(body.model, body.reasoning?.effort, 'reasoning.effort');
    if (badEffort) return openAIError(400, badEffort.message, badEffort.param, badEffort.code);
    const items = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;
    const loopError = responsesLoopError(items);
    if (loopError) return openAIError(400, loopError.message, loopError.param);
    const transcript = items.filter((i) => i.role).map((i) => ({ role: i.role!, content: textOf(i.content) }));
    const toolResults = items.filter((i) => i.type === 'function_call_output').length;
    const choice = typeof body.tool_choice === 'object' ? body.tool_choice.name : (body.tool_choice ?? 'auto');
    const reply = answer(
      {
        transcript,
        tools: (body.tools ?? []).map((t) => ({ name: t.name, parameters: t.parameters })),
        toolChoice: choice,
        afterToolResult: items[items.length - 1]?.type === 'function_call_output',
        toolResults,
        ...(body.instructions ? { system: body.instructions } : {}),
        schema: body.text?.format.type === 'json_schema' ? body.text.format.schema : schemaInText(body.instructions ?? ''),
      },
      { protocol: 'openai-responses', model: body.model, cacheKey: body.prompt_cache_key ?? null },
    );
    const { key, prompt } = openAIResponsesCacheText(body);
    const inputTokens = estimateTokens(prompt);
    const cached = state.openAICache.lookup(key, prompt);
    const id = `resp_${randomUUID().replace(/-/g, '')}`;
    const msgId = `msg_${randomUUID().replace(/-/g, '')}`;
    const text = reply.kind === 'text' ? reply.text : '';
    const answerItem =
      reply.kind === 'tool'
        ? [
            {
              type: 'function_call',
              id: `fc_${randomUUID().slice(0, 8)}`,
              call_id: `call_${randomUUID().slice(0, 8)}`,
              name: reply.name,
              arguments: JSON.stringify(reply.args),
              status: 'completed',
            },
          ]
        : [{ type: 'message', id: msgId, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] }];
    // a reasoning model reasons first: a reasoning item (summary when asked for, encrypted content when included)
    const thinks = reasoningModel(body.model) && body.reasoning?.effort !== 'none';
    const reasoning = thinks ? emulatedReasoning(transcript, toolResults) : '';
    const reasoningItem = {
      type: 'reasoning',
      id: `rs_${signReasoning('reasoning-id', reasoning)
        .replace(/[^A-Za-z0-9]/g, '')
        .slice(0, 24)}`,
      summary: body.reasoning?.summary ? [{ type: 'summary_text', text: reasoning }] : [],
      ...(body.include?.includes('reasoning.encrypted_content') ? { encrypted_content: encryptedReasoning(reasoning) } : {}),
    };
    const output: Record<string, unknown>[] = thinks ? [reasoningItem, ...answerItem] : answerItem;
    const outputTokens = estimateTokens(reasoning) + estimateTokens(reply.kind === 'tool' ? JSON.stringify(reply.args) : text);
    const response = {
      id,
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      status: 'completed',
      model: body.model,
      output,
      usage: {
        input_tokens: inputTokens,
        input_tokens_details: { cached_tokens: cached },
        output_tokens: outputTokens,
        output_tokens_details: { reasoning_tokens: estimateTokens(reasoning) },
        total_tokens: inputTokens + outputTokens,
      },
      error: null,
      incomplete_details: null,
    };
    if (!body.stream) return { kind: 'json', status: 200, body: response };
    let seq = 0;
    const ev = (type: string, data: Record<string, unknown>) => ({ event: type, data: { type, sequence_number: seq++, ...data } });
    // the lifecycle of the reference: created and in_progress (no output, usage null yet), each item added then done
    const inProgress = { ...response, status: 'in_progress', output: [], usage: null };
    const events = [ev('response.created', { response: inProgress }), ev('response.in_progress', { response: inProgress })];
    if (thinks) {
      events.push(ev('response.output_item.added', { output_index: 0, item: { ...reasoningItem, summary: [] } }));
      events.push(ev('response.output_item.done', { output_index: 0, item: reasoningItem }));
    }
    const at = thinks ? 1 : 0;
    if (reply.kind === 'text') {
      events.push(ev('response.output_item.added', { output_index: at, item: { ...answerItem[0], status: 'in_progress', content: [] } }));
      events.push(
        ev('response.content_part.added', { output_index: at, item_id: msgId, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } }),
      );
      for (const d of deltas(text)) events.push(ev('response.output_text.delta', { output_index: at, item_id: msgId, content_index: 0, delta: d }));
      events.push(ev('response.output_text.done', { output_index: at, item_id: msgId, content_index: 0, text }));
      events.push(
        ev('response.content_part.done', { output_index: at, item_id: msgId, content_index: 0, part: { type: 'output_text', text, annotations: [] } }),
      );
    } else {
      const call = answerItem[0] as { id: string; name: string; arguments: string };
      events.push(ev('response.output_item.added', { output_index: at, item: { ...call, arguments: '', status: 'in_progress' } }));
      events.push(ev('response.function_call_arguments.delta', { output_index: at, item_id: call.id, delta: call.arguments }));
      events.push(ev('response.function_call_arguments.done', { output_index: at, item_id: call.id, name: call.name, arguments: call.arguments }));
    }
    events.push(ev('response.output_item.done', { output_index: at, item: answerItem[0] }));
    events.push(ev('response.completed', { response }));
    return sse(events);
  },
};
