import { z } from 'zod';

/**
 * The wire shapes the adapters send and read, as the providers' public references define them
 * (OpenAI's OpenAPI spec, Anthropic's Messages reference and streaming guide, Google's
 * generateContent reference and @google/genai types). The golden fixtures under
 * `libs/providers/test/fixtures/wire` validate against them, and so does every reply of the
 * emulator: it cannot drift from the real shapes unnoticed. Fields the adapters do not read pass
 * through; the ones they read are typed, with the counting rules the references state.
 */

const count = z.number().int().nonnegative();
const loose = <T extends z.ZodRawShape>(shape: T) => z.object(shape).passthrough();

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
const toolName = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'a function name is 1-64 of a-z, A-Z, 0-9, _ and -');
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

// ---------- Anthropic Messages ----------

const cacheControl = z.object({ type: z.literal('ephemeral'), ttl: z.enum(['5m', '1h']).optional() }).strict();
const anthropicUsage = loose({
  input_tokens: count,
  output_tokens: count,
  cache_creation_input_tokens: count.nullish(),
  cache_read_input_tokens: count.nullish(),
  cache_creation: loose({ ephemeral_5m_input_tokens: count, ephemeral_1h_input_tokens: count }).nullish(),
}).refine(
  (u) =>
    u.cache_creation == null ||
    u.cache_creation.ephemeral_5m_input_tokens + u.cache_creation.ephemeral_1h_input_tokens === (u.cache_creation_input_tokens ?? 0),
  'cache_creation splits cache_creation_input_tokens by TTL',
);
const contentBlock = z.discriminatedUnion('type', [
  loose({ type: z.literal('text'), text: z.string() }),
  loose({ type: z.literal('tool_use'), id: z.string().min(1), name: z.string().min(1), input: z.record(z.string(), z.unknown()) }),
  loose({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() }),
  loose({ type: z.literal('redacted_thinking'), data: z.string() }),
]);
const stopReason = z.enum(['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal', 'model_context_window_exceeded']);
const message = loose({
  id: z.string().min(1),
  type: z.literal('message'),
  role: z.literal('assistant'),
  model: z.string().min(1),
  content: z.array(contentBlock),
  stop_reason: stopReason.nullable(),
  stop_sequence: z.string().nullable(),
  usage: anthropicUsage,
});
const anthropicEvents = {
  message_start: loose({
    message: message.refine((m) => m.content.length === 0 && m.stop_reason === null, 'message_start has no content and no stop_reason yet'),
  }),
  content_block_start: loose({ index: count, content_block: contentBlock }),
  content_block_delta: loose({
    index: count,
    delta: z.discriminatedUnion('type', [
      loose({ type: z.literal('text_delta'), text: z.string() }),
      loose({ type: z.literal('input_json_delta'), partial_json: z.string() }),
      loose({ type: z.literal('thinking_delta'), thinking: z.string() }),
      loose({ type: z.literal('signature_delta'), signature: z.string() }),
    ]),
  }),
  content_block_stop: loose({ index: count }),
  message_delta: loose({
    delta: loose({ stop_reason: stopReason.nullable(), stop_sequence: z.string().nullish() }),
    usage: loose({
      output_tokens: count,
      input_tokens: count.nullish(),
      cache_creation_input_tokens: count.nullish(),
      cache_read_input_tokens: count.nullish(),
    }),
  }),
  message_stop: loose({}),
  ping: loose({}),
} as const;

const cached = { cache_control: cacheControl.optional() };
const blockParam = z.discriminatedUnion('type', [
  loose({ type: z.literal('text'), text: z.string(), ...cached }),
  loose({ type: z.literal('image'), source: loose({ type: z.literal('base64'), media_type: z.string(), data: z.string().min(1) }), ...cached }),
  loose({ type: z.literal('tool_use'), id: z.string().min(1), name: z.string().min(1), input: z.record(z.string(), z.unknown()), ...cached }),
  loose({ type: z.literal('tool_result'), tool_use_id: z.string().min(1), content: z.union([z.string(), z.array(z.unknown())]).optional(), ...cached }),
  z.object({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() }).strict(),
  z.object({ type: z.literal('redacted_thinking'), data: z.string() }).strict(),
]);
type Marked = { type?: string; text?: unknown; cache_control?: { ttl?: string } };
const anthropicRequest = loose({
  model: z.string().min(1),
  max_tokens: count,
  system: z.union([z.string(), z.array(loose({ type: z.literal('text'), text: z.string(), ...cached }))]).optional(),
  messages: z.array(loose({ role: z.enum(['user', 'assistant']), content: z.union([z.string(), z.array(blockParam)]) })).min(1),
  tools: z.array(loose({ name: toolName, description: z.string().optional(), input_schema: loose({ type: z.literal('object') }), ...cached })).optional(),
  tool_choice: z.union([loose({ type: z.enum(['auto', 'any', 'none']) }), loose({ type: z.literal('tool'), name: toolName })]).optional(),
  stream: z.boolean().optional(),
  cache_control: cacheControl.optional(),
}).superRefine((body, ctx) => {
  // the prefix order: tools, then system, then messages
  const blocks: Marked[] = [
    ...(body.tools ?? []),
    ...(typeof body.system === 'string' ? [] : (body.system ?? [])),
    ...body.messages.flatMap((m) => (typeof m.content === 'string' ? [] : m.content)),
  ];
  const marked = blocks.filter((b) => b.cache_control !== undefined);
  if (marked.length > 4) ctx.addIssue({ code: 'custom', message: `at most 4 blocks carry cache_control (found ${marked.length})` });
  if (marked.some((b) => b.type === 'text' && b.text === '')) ctx.addIssue({ code: 'custom', message: 'an empty text block cannot carry cache_control' });
  const ttls = marked.map((b) => b.cache_control?.ttl ?? '5m');
  if (ttls.indexOf('5m') >= 0 && ttls.lastIndexOf('1h') > ttls.indexOf('5m')) {
    ctx.addIssue({ code: 'custom', message: 'a 1h breakpoint comes before every 5m one' });
  }
});

// ---------- Gemini generateContent ----------

const DATA_FIELDS = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult'] as const;
const part = loose({
  text: z.string().optional(),
  thought: z.boolean().optional(),
  thoughtSignature: z.string().optional(),
  inlineData: loose({ mimeType: z.string(), data: z.string() }).optional(),
  functionCall: loose({ id: z.string().optional(), name: toolName, args: z.record(z.string(), z.unknown()).optional() }).optional(),
  functionResponse: loose({ id: z.string().optional(), name: toolName, response: z.record(z.string(), z.unknown()) }).optional(),
}).refine((p) => DATA_FIELDS.filter((k) => k in p).length === 1, 'a part carries exactly one kind of data');
const geminiContent = loose({ role: z.enum(['user', 'model']), parts: z.array(part).min(1) });
const usageMetadata = loose({
  promptTokenCount: count.optional(),
  cachedContentTokenCount: count.optional(),
  candidatesTokenCount: count.optional(),
  toolUsePromptTokenCount: count.optional(),
  thoughtsTokenCount: count.optional(),
  totalTokenCount: count.optional(),
})
  .refine((u) => (u.cachedContentTokenCount ?? 0) <= (u.promptTokenCount ?? 0), 'the cached tokens are part of promptTokenCount')
  .refine(
    (u) =>
      u.totalTokenCount === undefined ||
      u.totalTokenCount === (u.promptTokenCount ?? 0) + (u.candidatesTokenCount ?? 0) + (u.toolUsePromptTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0),
    'totalTokenCount is prompt + candidates + tool-use prompt + thoughts',
  );
const generateContentResponse = loose({
  candidates: z
    .array(
      loose({
        content: loose({ role: z.literal('model').optional(), parts: z.array(part).optional() }).optional(),
        finishReason: z
          .string()
          .regex(/^[A-Z_]+$/)
          .optional(),
        index: count.optional(),
      }),
    )
    .optional(),
  usageMetadata: usageMetadata.optional(),
  modelVersion: z.string().optional(),
  responseId: z.string().optional(),
});
const geminiRequest = loose({
  contents: z.array(geminiContent).min(1),
  systemInstruction: loose({ role: z.string().optional(), parts: z.array(part).min(1) }).optional(),
  tools: z
    .array(
      loose({
        functionDeclarations: z
          .array(
            loose({ name: toolName, description: z.string().optional() }).refine(
              (d) => !('parameters' in d && 'parametersJsonSchema' in d),
              'parameters or parametersJsonSchema, not both',
            ),
          )
          .optional(),
      }),
    )
    .optional(),
  toolConfig: loose({
    functionCallingConfig: loose({
      mode: z.enum(['AUTO', 'ANY', 'NONE', 'VALIDATED']).optional(),
      allowedFunctionNames: z.array(toolName).optional(),
    }).optional(),
  }).optional(),
  generationConfig: loose({
    maxOutputTokens: z.number().int().positive().optional(),
    temperature: z.number().min(0).max(2).optional(),
    thinkingConfig: loose({ thinkingBudget: z.number().int().min(-1).optional(), includeThoughts: z.boolean().optional() }).optional(),
  }).optional(),
});

/** The shapes, by protocol: `request`, `response`, and `events` (streamed events by `type`) or `chunk` (streamed chunks). */
export const WIRE_SHAPES = {
  'openai-chat': { request: chatRequest, response: chatCompletion, chunk: chatChunk },
  'openai-responses': { request: responsesRequest, response, events: responsesEvents },
  anthropic: { request: anthropicRequest, response: message, events: anthropicEvents },
  gemini: { request: geminiRequest, response: generateContentResponse, chunk: generateContentResponse },
} as const;
