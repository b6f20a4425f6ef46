import { z } from 'zod';
import { count, loose, toolName } from './wire-shape-parts';

// ---------- OpenAI Chat Completions ----------

const chatUsage = loose({
  prompt_tokens: count,
  completion_tokens: count,
  total_tokens: count,
  prompt_tokens_details: loose({ cached_tokens: count.optional(), audio_tokens: count.optional() }).nullish(),
  completion_tokens_details: loose({ reasoning_tokens: count.optional() }).nullish(),
})
  .refine((u) => u.total_tokens === u.prompt_tokens + u.completion_tokens, 'total_tokens is prompt_tokens + completion_tokens')
  .refine((u) => (u.prompt_tokens_details?.cached_tokens ?? 0) <= u.prompt_tokens, 'cached_tokens are part of prompt_tokens');

const chatToolCall = loose({ id: z.string().min(1), type: z.literal('function'), function: loose({ name: z.string().min(1), arguments: z.string() }) });
const chatFinish = z.enum(['stop', 'length', 'tool_calls', 'content_filter', 'function_call']);

const chatCompletion = loose({
  id: z.string().min(1),
  object: z.literal('chat.completion'),
  created: count,
  model: z.string().min(1),
  choices: z
    .array(
      loose({
        index: count,
        message: loose({
          role: z.literal('assistant'),
          content: z.string().nullable(),
          refusal: z.string().nullish(),
          tool_calls: z.array(chatToolCall).optional(),
        }),
        finish_reason: chatFinish,
        logprobs: z.unknown().optional(),
      }),
    )
    .min(1),
  usage: chatUsage.optional(),
});

const chatChunk = loose({
  id: z.string().min(1),
  object: z.literal('chat.completion.chunk'),
  created: count,
  model: z.string().min(1),
  choices: z.array(
    loose({
      index: count,
      delta: loose({
        role: z.literal('assistant').optional(),
        content: z.string().nullish(),
        tool_calls: z
          .array(
            loose({
              index: count,
              id: z.string().optional(),
              type: z.literal('function').optional(),
              function: loose({ name: z.string().optional(), arguments: z.string().optional() }).optional(),
            }),
          )
          .optional(),
      }),
      finish_reason: chatFinish.nullable(),
    }),
  ),
  usage: chatUsage.nullish(),
});

const textPart = loose({ type: z.literal('text'), text: z.string() });
const chatRequest = loose({
  model: z.string().min(1),
  messages: z
    .array(
      z.union([
        loose({ role: z.enum(['system', 'developer']), content: z.union([z.string(), z.array(textPart)]) }),
        loose({
          role: z.literal('user'),
          content: z.union([
            z.string(),
            z.array(z.union([textPart, loose({ type: z.literal('image_url'), image_url: loose({ url: z.string().min(1), detail: z.string().optional() }) })])),
          ]),
        }),
        loose({ role: z.literal('assistant'), content: z.union([z.string(), z.array(textPart)]).nullish(), tool_calls: z.array(chatToolCall).optional() }),
        loose({ role: z.literal('tool'), tool_call_id: z.string().min(1), content: z.union([z.string(), z.array(textPart)]) }),
      ]),
    )
    .min(1),
  tools: z
    .array(
      loose({
        type: z.literal('function'),
        function: loose({ name: toolName, description: z.string().optional(), parameters: z.record(z.string(), z.unknown()).optional() }),
      }),
    )
    .optional(),
  tool_choice: z.union([z.enum(['auto', 'none', 'required']), loose({ type: z.literal('function'), function: loose({ name: toolName }) })]).optional(),
  stream: z.boolean().optional(),
  stream_options: loose({ include_usage: z.boolean().optional() }).nullish(),
  max_completion_tokens: z.number().int().positive().optional(),
  temperature: z.number().min(0).max(2).optional(),
  prompt_cache_key: z.string().optional(),
}).refine((b) => b.stream_options == null || b.stream === true, 'stream_options is set only with stream: true');

// ---------- OpenAI Responses ----------

const responsesUsage = loose({
  input_tokens: count,
  input_tokens_details: loose({ cached_tokens: count }).optional(),
  output_tokens: count,
  output_tokens_details: loose({ reasoning_tokens: count }).optional(),
  total_tokens: count,
})
  .refine((u) => u.total_tokens === u.input_tokens + u.output_tokens, 'total_tokens is input_tokens + output_tokens')
  .refine((u) => (u.input_tokens_details?.cached_tokens ?? 0) <= u.input_tokens, 'cached_tokens are part of input_tokens')
  .refine((u) => (u.output_tokens_details?.reasoning_tokens ?? 0) <= u.output_tokens, 'reasoning_tokens are part of output_tokens');

const outputText = loose({ type: z.literal('output_text'), text: z.string(), annotations: z.array(z.unknown()) });
const outputItem = z.discriminatedUnion('type', [
  loose({ type: z.literal('message'), id: z.string().min(1), status: z.string(), role: z.literal('assistant'), content: z.array(outputText) }),
  loose({ type: z.literal('function_call'), id: z.string().optional(), call_id: z.string().min(1), name: z.string().min(1), arguments: z.string() }),
  loose({
    type: z.literal('reasoning'),
    id: z.string().min(1),
    summary: z.array(loose({ type: z.literal('summary_text'), text: z.string() })),
    encrypted_content: z.string().nullish(),
  }),
]);
const response = loose({
  id: z.string().min(1),
  object: z.literal('response'),
  created_at: count,
  status: z.enum(['completed', 'failed', 'in_progress', 'cancelled', 'queued', 'incomplete']),
  model: z.string().min(1),
  output: z.array(outputItem),
  usage: responsesUsage.nullish(),
  error: z.unknown().optional(),
  incomplete_details: loose({ reason: z.string() }).nullish(),
});
const inProgress = response.refine(
  (r) => r.status === 'in_progress' && r.output.length === 0 && r.usage == null,
  'a response in progress has no output and usage null yet',
);
const itemEvent = { output_index: count, item: outputItem };
const partEvent = { item_id: z.string().min(1), output_index: count, content_index: count };
const responsesEvents = {
  'response.created': loose({ response: inProgress }),
  'response.in_progress': loose({ response: inProgress }),
  'response.output_item.added': loose(itemEvent),
  'response.output_item.done': loose(itemEvent),
  'response.content_part.added': loose({ ...partEvent, part: outputText }),
  'response.content_part.done': loose({ ...partEvent, part: outputText }),
  'response.output_text.delta': loose({ ...partEvent, delta: z.string() }),
  'response.output_text.done': loose({ ...partEvent, text: z.string() }),
  'response.function_call_arguments.delta': loose({ item_id: z.string().min(1), output_index: count, delta: z.string() }),
  'response.function_call_arguments.done': loose({ item_id: z.string().min(1), output_index: count, name: toolName, arguments: z.string() }),
  'response.completed': loose({ response: response.refine((r) => r.status === 'completed', 'response.completed carries a completed response') }),
} as const;

const inputContent = z.union([
  z.string(),
  z.array(
    z.union([
      loose({ type: z.literal('input_text'), text: z.string() }),
      loose({ type: z.literal('input_image'), image_url: z.string().min(1) }),
      loose({ type: z.literal('output_text'), text: z.string() }),
    ]),
  ),
]);
const responsesRequest = loose({
  model: z.string().min(1),
  instructions: z.string().optional(),
  input: z.union([
    z.string(),
    z.array(
      z.union([
        loose({ type: z.literal('message').optional(), role: z.enum(['user', 'assistant', 'system', 'developer']), content: inputContent }),
        loose({ type: z.literal('function_call'), call_id: z.string().min(1), name: toolName, arguments: z.string() }),
        loose({ type: z.literal('function_call_output'), call_id: z.string().min(1), output: z.string() }),
        loose({ type: z.literal('reasoning'), summary: z.array(z.unknown()) }),
      ]),
    ),
  ]),
  tools: z
    .array(
      loose({
        type: z.literal('function'),
        name: toolName,
        description: z.string().nullish(),
        parameters: z.record(z.string(), z.unknown()).nullable(),
        strict: z.boolean().nullish(),
      }),
    )
    .optional(),
  tool_choice: z.union([z.enum(['auto', 'none', 'required']), loose({ type: z.literal('function'), name: toolName })]).optional(),
  max_output_tokens: z.number().int().positive().optional(),
  prompt_cache_key: z.string().optional(),
  stream: z.boolean().optional(),
});

/** OpenAI Chat Completions: the request, the completion, a streamed chunk. */
export const OPENAI_CHAT_WIRE = { request: chatRequest, response: chatCompletion, chunk: chatChunk };

/** OpenAI Responses: the request, the response, the streamed events by type. */
export const OPENAI_RESPONSES_WIRE = { request: responsesRequest, response, events: responsesEvents };
