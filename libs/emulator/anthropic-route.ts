import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { PROVIDER_CACHE_BREAK as CACHE_BREAK } from '../providers';
import { anthropicLoopError, anthropicThinkingError, redactedData } from './anthropic-checks';
import { estimateTokens } from '../text';
import { emulatedReasoning, signReasoning } from './reasoning';
import { textOf } from './reply';
import { deltas, type EmulatorReply, type EmulatorRoute, sse, streamFlag } from './route';
import { schemaInText } from './schema-instance';

const Block = z.object({ type: z.string() }).passthrough();
const MessagesBody = z
  .object({
    model: z.string().min(1),
    max_tokens: z.number().int().positive(),
    system: z.union([z.string(), z.array(Block)]).optional(),
    messages: z.array(z.object({ role: z.string(), content: z.union([z.string(), z.array(Block)]) })).min(1),
    tools: z.array(z.object({ name: z.string(), input_schema: z.unknown() }).passthrough()).optional(),
    cache_control: z.object({ type: z.literal('ephemeral'), ttl: z.enum(['5m', '1h']).optional() }).optional(),
    tool_choice: z
      .object({ type: z.enum(['auto', 'any', 'tool', 'none']), name: z.string().optional() })
      .passthrough()
      .optional(),
    stream: z.boolean().optional(),
    thinking: z
      .object({ type: z.enum(['enabled', 'disabled']), budget_tokens: z.number().int().optional() })
      .passthrough()
      .optional(),
  })
  .passthrough();

/** The Messages API's error shape. */
export function anthropicError(status: number, message: string): EmulatorReply {
  return {
    kind: 'json',
    status,
    body: { type: 'error', error: { type: 'invalid_request_error', message }, request_id: `req_${randomUUID().replace(/-/g, '').slice(0, 24)}` },
  };
}

const withoutCacheControl = (b: Record<string, unknown>) => {
  const { cache_control: _c, ...rest } = b;
  return JSON.stringify(rest);
};

type CachePosition = { text: string; breakpoint: boolean; message: number; ttl?: string; cacheable: boolean };
const position = (b: Record<string, unknown>, message: number, prefix = ''): CachePosition => ({
  text: prefix + withoutCacheControl(b),
  breakpoint: 'cache_control' in b,
  message,
  ...('cache_control' in b ? { ttl: (b.cache_control as { ttl?: string } | null)?.ttl ?? '5m' } : {}),
  // thinking blocks and empty text cannot carry a breakpoint
  cacheable: b.type !== 'thinking' && b.type !== 'redacted_thinking' && !(b.type === 'text' && b.text === ''),
});

/**
 * Cacheable positions in prefix order (tools, system blocks, message blocks), each serialized
 * without its cache_control, and whether it carries a breakpoint (and its TTL).
 */
export function anthropicBlocks(body: {
  tools?: Record<string, unknown>[];
  system?: string | Record<string, unknown>[];
  messages: { role: string; content: string | Record<string, unknown>[] }[];
}): CachePosition[] {
  const blocks: CachePosition[] = [];
  for (const t of body.tools ?? []) blocks.push(position(t, -1));
  const system = typeof body.system === 'string' ? [{ type: 'text', text: body.system }] : (body.system ?? []);
  for (const b of system) blocks.push(position(b, -1));
  body.messages.forEach((m, mi) => {
    const content = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    content.forEach((b, i) => blocks.push(position(b, mi, i === 0 ? `${m.role}:` : '')));
  });
  return blocks;
}

/**
 * Automatic caching (a top-level `cache_control`): the breakpoint goes on the last cacheable block
 * and takes one of the 4 slots. A no-op where that block already carries one of the same TTL; an
 * error where it carries another TTL or the 4 slots are taken. Returns the error, or null.
 */
function automaticBreakpoint(blocks: CachePosition[], cacheControl: { ttl?: string } | undefined): string | null {
  if (!cacheControl) return null;
  const ttl = cacheControl.ttl ?? '5m';
  let last = blocks.length - 1;
  while (last >= 0 && !blocks[last].cacheable) last--;
  if (last < 0) return null;
  const block = blocks[last];
  if (block.breakpoint) return block.ttl === ttl ? null : `cache_control: the automatic breakpoint's ttl ${ttl} differs from the last block's ${block.ttl}`;
  if (blocks.filter((b) => b.breakpoint).length >= 4) return 'A maximum of 4 blocks with cache_control may be provided, the automatic one included.';
  blocks[last] = { ...block, breakpoint: true, ttl };
  return null;
}

/** POST /v1/messages: the Anthropic Messages wire format, with breakpoint caching. */
export const anthropicRoute: EmulatorRoute = {
  method: 'POST',
  path: /^\/v1\/messages$/,
  streams: streamFlag,
  refuseStreaming: () => anthropicError(400, 'stream: streaming is not supported for this model'),
  handle(raw, { state, reply: answer }) {
    const parsed = MessagesBody.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return anthropicError(400, `${issue.path.join('.')}: ${issue.message}`);
    }
    const body = parsed.data;
    const badRole = body.messages.findIndex((m) => m.role !== 'user' && m.role !== 'assistant');
    if (badRole >= 0) {
      return anthropicError(400, `messages.${badRole}.role: Input should be 'user' or 'assistant' (system messages go in the top-level "system" field)`);
    }
    if (JSON.stringify(body).includes(CACHE_BREAK)) return anthropicError(400, 'internal cache marker leaked into the request');
    const blocks = anthropicBlocks(body);
    const system = typeof body.system === 'string' ? [{ type: 'text', text: body.system }] : (body.system ?? []);
    const marked = blocks.filter((b) => b.breakpoint).length;
    if (marked > 4) return anthropicError(400, `A maximum of 4 blocks with cache_control may be provided. Found ${marked}.`);
    const automaticError = automaticBreakpoint(blocks, body.cache_control);
    if (automaticError) return anthropicError(400, automaticError);
    for (const m of body.messages) {
      if (typeof m.content !== 'string' && m.content.some((b) => (b.type === 'thinking' || b.type === 'redacted_thinking') && 'cache_control' in b)) {
        return anthropicError(400, 'thinking blocks cannot carry cache_control');
      }
    }
    const thinkingError = anthropicThinkingError(body);
    if (thinkingError) return anthropicError(400, thinkingError);
    const thinking = body.thinking?.type === 'enabled';
    const loopError = anthropicLoopError(body.messages, thinking);
    if (loopError) return anthropicError(400, loopError);
    const cache = state.anthropicCache.lookup(body.model, blocks);
    const transcript = body.messages.map((m) => ({ role: m.role, content: textOf(m.content) }));
    const last = body.messages[body.messages.length - 1];
    const toolResults = body.messages.flatMap((m) => (typeof m.content === 'string' ? [] : m.content.filter((b) => b.type === 'tool_result'))).length;
    const choice =
      body.tool_choice?.type === 'tool' ? (body.tool_choice.name ?? '') : body.tool_choice?.type === 'any' ? 'required' : (body.tool_choice?.type ?? 'auto');
    const reply = answer(
      {
        transcript,
        tools: (body.tools ?? []).map((t) => ({ name: t.name, parameters: t.input_schema })),
        toolChoice: choice,
        afterToolResult: typeof last.content !== 'string' && last.content.some((b) => b.type === 'tool_result'),
        toolResults,
        system: system.map((b) => textOf([b])).join('\n'),
        schema: schemaInText(system.map((b) => textOf([b])).join('\n')),
      },
      { protocol: 'anthropic', model: body.model, cacheKey: null },
    );
    const answer_: Record<string, unknown> =
      reply.kind === 'tool'
        ? { type: 'tool_use', id: `toolu_${randomUUID().slice(0, 12)}`, name: reply.name, input: reply.args }
        : { type: 'text', text: reply.text };
    // with thinking on: a signed thinking block and a redacted_thinking block come first
    const reasoning = thinking ? emulatedReasoning(transcript, toolResults) : '';
    const content: Record<string, unknown>[] = thinking
      ? [
          { type: 'thinking', thinking: reasoning, signature: signReasoning('thinking', reasoning) },
          { type: 'redacted_thinking', data: redactedData(reasoning) },
          answer_,
        ]
      : [answer_];
    const outputTokens = estimateTokens(reasoning) + estimateTokens(reply.kind === 'tool' ? JSON.stringify(reply.args) : reply.text);
    // the cache write split by TTL (the emulated cache keeps no TTL apart: a write counts as the last breakpoint's TTL)
    const writeTtl = blocks.filter((b) => b.breakpoint).pop()?.ttl ?? '5m';
    const usage = {
      input_tokens: cache.uncached,
      output_tokens: outputTokens,
      cache_creation_input_tokens: cache.created,
      cache_read_input_tokens: cache.read,
      cache_creation: { ephemeral_5m_input_tokens: writeTtl === '1h' ? 0 : cache.created, ephemeral_1h_input_tokens: writeTtl === '1h' ? cache.created : 0 },
    };
    const message = {
      id: `msg_${randomUUID()}`,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content,
      stop_reason: reply.kind === 'tool' ? 'tool_use' : 'end_turn',
      stop_sequence: null,
      usage,
    };
    if (!body.stream) return { kind: 'json', status: 200, body: message };
    const events: { event: string; data: unknown }[] = [
      {
        event: 'message_start',
        data: { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } },
      },
    ];
    const block = (index: number, start: unknown, blockDeltas: unknown[]) => {
      events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: start } });
      for (const delta of blockDeltas) events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta } });
      events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
    };
    let index = 0;
    if (thinking) {
      block(index++, { type: 'thinking', thinking: '', signature: '' }, [
        ...deltas(reasoning).map((d) => ({ type: 'thinking_delta', thinking: d })),
        { type: 'signature_delta', signature: content[0].signature },
      ]);
      block(index++, content[1], []);
    }
    if (reply.kind === 'tool') block(index, { ...answer_, input: {} }, [{ type: 'input_json_delta', partial_json: JSON.stringify(reply.args) }]);
    else
      block(
        index,
        { type: 'text', text: '' },
        deltas(reply.text).map((d) => ({ type: 'text_delta', text: d })),
      );
    events.push({
      event: 'message_delta',
      // the usage of message_delta is cumulative: the input counts again beside the final output count
      data: {
        type: 'message_delta',
        delta: { stop_reason: message.stop_reason, stop_sequence: null },
        usage: {
          input_tokens: usage.input_tokens,
          cache_creation_input_tokens: usage.cache_creation_input_tokens,
          cache_read_input_tokens: usage.cache_read_input_tokens,
          output_tokens: outputTokens,
        },
      },
    });
    events.push({ event: 'message_stop', data: { type: 'message_stop' } });
    return sse(events);
  },
};
