import { z } from 'zod';
import { count, loose, toolName } from './wire-shape-parts';

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

/** Anthropic Messages: the request, the message, the streamed events by type. */
export const ANTHROPIC_WIRE = { request: anthropicRequest, response: message, events: anthropicEvents };
