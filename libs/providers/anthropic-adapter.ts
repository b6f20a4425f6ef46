import type Anthropic from '@anthropic-ai/sdk';
import { CACHE_BREAK, stripCacheBreaks } from './cache-break';
import { continuationFor } from './continuation';
import { splitLeadingSystem, wrapSystemInstruction } from './late-system';
import { capabilitiesOf, type ModelCapabilities } from './model-table';
import { StreamWatch, toProviderError } from './provider-errors';
import { resolveReasoning, resolveToolChoice, thinkingBudget } from './request-preferences';
import type { ChatMessage, ModelCall, ModelResponse, ProviderAdapter, ReasoningSetting, SendOptions, ToolCall } from './types';

export interface AnthropicAdapterOptions {
  apiKey: string;
  baseURL?: string;
  maxRetries?: number;
  timeoutMs?: number;
  capabilities?: Partial<ModelCapabilities>;
}

type Block = Record<string, unknown> & { type: string };
type WireMessage = { role: 'user' | 'assistant'; content: Block[] | string };

const EPHEMERAL = { type: 'ephemeral' } as const;
const DEFAULT_MAX_TOKENS = 4096;
/** The smallest `budget_tokens` the Messages API takes. */
const MIN_THINKING_BUDGET = 1024;

/**
 * The thinking budget of a request capped at `maxTokens`, or null when thinking does not fit.
 * The API takes 1024 <= budget_tokens < max_tokens, and thinking counts toward max_tokens (the
 * slot's cap on everything the model writes): the budget is the effort's, at most half of
 * max_tokens so the answer keeps the other half, but not under the minimum 1024 while that fits
 * under max_tokens. With max_tokens <= 1024 thinking is not sent at all (the model answers
 * without it) rather than a request the API rejects.
 */
export function anthropicThinkingBudget(effort: ReasoningSetting['effort'], maxTokens: number): number | null {
  if (maxTokens <= MIN_THINKING_BUDGET) return null;
  return Math.min(thinkingBudget(effort), Math.max(MIN_THINKING_BUDGET, Math.floor(maxTokens / 2)));
}

/**
 * Anthropic Messages on the official SDK. Spec §2 and §5: only leading system messages go to
 * top-level `system`; a later one keeps its place as user content in <system-instruction>. With
 * cache boundaries: at most two stable system boundaries (from the sentinels), one on the last
 * message of the history and one on the last cacheable block; every message is a block array.
 */
export class AnthropicAdapter implements ProviderAdapter {
  readonly protocol = 'anthropic' as const;
  private readonly client: Anthropic;

  constructor(private readonly options: AnthropicAdapterOptions) {
    // required here, not at the top: only a process with a slot on this protocol loads the SDK (~0.2 s of CPU)
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { Anthropic } = require('@anthropic-ai/sdk') as typeof import('@anthropic-ai/sdk');
    this.client = new Anthropic({
      apiKey: options.apiKey,
      baseURL: options.baseURL,
      maxRetries: options.maxRetries ?? 3,
      timeout: options.timeoutMs ?? 120_000,
    });
  }

  buildRequest(call: ModelCall): Record<string, unknown> {
    const caps = capabilitiesOf(call.model, this.options.capabilities);
    const blocks = call.cacheBoundaries === true;
    const { leading, rest } = splitLeadingSystem(call.messages);
    const system = systemBlocks(leading, blocks);
    const messages = rest.map((m) => toWire(m, blocks));
    if (blocks) {
      // the history boundary: on the message the caller marked as the end of the history, with or
      // without a turn context after it; none when the request has no history (e.g. maxTurns 0,
      // where the turn context is a leading system message)
      const historyEnd = rest.findIndex((m) => m.endsHistory === true);
      for (let i = historyEnd; i >= 0; i--) if (markLastCacheable(messages[i])) break;
      // the last boundary: on the last cacheable block of the request
      for (let i = messages.length - 1; i >= 0; i--) if (markLastCacheable(messages[i])) break;
    }
    const maxTokens = call.maxOutputTokens ?? DEFAULT_MAX_TOKENS;
    const body: Record<string, unknown> = { model: call.model, max_tokens: maxTokens };
    if (system.length > 0) body.system = blocks ? system : system.map((b) => b.text).join('');
    body.messages = messages;
    if (call.tools?.length) {
      body.tools = call.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters }));
      const choice = resolveToolChoice(call, caps);
      if (choice !== undefined) {
        body.tool_choice = choice === 'required' ? { type: 'any' } : typeof choice === 'string' ? { type: choice } : { type: 'tool', name: choice.name };
      }
    }
    const reasoning = resolveReasoning(call, caps);
    const budget = reasoning.kind === 'on' ? anthropicThinkingBudget(reasoning.effort, maxTokens) : null;
    if (caps.reasoning === 'anthropic-thinking') {
      if (reasoning.kind === 'off') body.thinking = { type: 'disabled' };
      if (budget !== null) body.thinking = { type: 'enabled', budget_tokens: budget };
    }
    // with thinking on the API takes temperature 1 only: left out (1 is its default)
    const thinking = caps.reasoning === 'anthropic-thinking' && budget !== null;
    if (call.temperature !== undefined && !thinking) body.temperature = call.temperature;
    if (call.stream) body.stream = true;
    return body;
  }

  async send(body: Record<string, unknown>, options: SendOptions = {}): Promise<ModelResponse> {
    const watch = body.stream === true ? new StreamWatch(options.signal) : undefined;
    try {
      if (watch) {
        const watched = watch.watch(options);
        const stream = this.client.messages.stream({ ...(body as unknown as Anthropic.MessageCreateParamsNonStreaming) }, { signal: options.signal });
        stream.on('connect', () => (watch.opened = true));
        stream.on('streamEvent', () => options.onProgress?.());
        stream.on('text', (delta) => watched.onText?.(delta));
        return fromMessage(await stream.finalMessage());
      }
      return fromMessage(await this.client.messages.create(body as unknown as Anthropic.MessageCreateParamsNonStreaming, { signal: options.signal }));
    } catch (error) {
      throw toProviderError('anthropic', error, watch);
    }
  }
}

/** Leading system text split at the sentinels; cache_control on at most the last two boundaries. */
function systemBlocks(leading: readonly ChatMessage[], withBoundaries: boolean): (Block & { text: string })[] {
  const parts: { text: string; boundary: boolean }[] = [];
  leading.forEach((m, i) => {
    const pieces = m.content.split(CACHE_BREAK);
    pieces.forEach((p, j) => {
      const text = (i > 0 && j === 0 ? '\n\n' : '') + p;
      if (text !== '') parts.push({ text, boundary: j < pieces.length - 1 });
    });
  });
  if (!withBoundaries) return parts.map((p) => ({ type: 'text', text: p.text }));
  const boundaries = parts.map((p, i) => (p.boundary ? i : -1)).filter((i) => i >= 0);
  const keep = new Set(boundaries.slice(-2));
  return parts.map((p, i) => ({ type: 'text', text: p.text, ...(keep.has(i) ? { cache_control: EPHEMERAL } : {}) }));
}

function toWire(m: ChatMessage, asBlocks: boolean): WireMessage {
  if (m.role === 'system') return textMessage('user', wrapSystemInstruction(m.content), asBlocks);
  if (m.role === 'tool') return { role: 'user', content: [{ type: 'tool_result', tool_use_id: m.toolCallId ?? '', content: m.content }] };
  if (m.role === 'assistant') {
    const content: Block[] = [];
    // thinking blocks go back unchanged, first in the turn (a thinking block without its signature is a 400)
    const carried = continuationFor(m.continuation, 'anthropic');
    if (carried) content.push(...carried.blocks.map((b) => ({ ...b }) as Block));
    else if (m.thinking?.signature) content.push({ type: 'thinking', thinking: m.thinking.text, signature: m.thinking.signature });
    if (m.content) content.push({ type: 'text', text: stripCacheBreaks(m.content) });
    for (const c of m.toolCalls ?? []) content.push({ type: 'tool_use', id: c.id, name: c.name, input: c.arguments });
    if (!asBlocks && content.length === 1 && content[0].type === 'text') return { role: 'assistant', content: String(content[0].text) };
    return { role: 'assistant', content };
  }
  if (m.images?.length) {
    return {
      role: 'user',
      content: [
        ...m.images.map((i) => ({ type: 'image', source: { type: 'base64', media_type: i.mimeType, data: i.data } })),
        { type: 'text', text: stripCacheBreaks(m.content) },
      ],
    };
  }
  return textMessage('user', stripCacheBreaks(m.content), asBlocks);
}

function textMessage(role: 'user' | 'assistant', text: string, asBlocks: boolean): WireMessage {
  return { role, content: asBlocks ? [{ type: 'text', text }] : text };
}

/** Sets cache_control on the message's last cacheable block (not thinking, not empty text). */
function markLastCacheable(message: WireMessage): boolean {
  if (typeof message.content === 'string') return false;
  for (let i = message.content.length - 1; i >= 0; i--) {
    const b = message.content[i];
    if (b.type === 'thinking' || b.type === 'redacted_thinking' || (b.type === 'text' && !b.text)) continue;
    b.cache_control = EPHEMERAL;
    return true;
  }
  return false;
}

function fromMessage(message: Anthropic.Message): ModelResponse {
  const text = message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
  const toolCalls: ToolCall[] = message.content.flatMap((b) =>
    b.type === 'tool_use' ? [{ id: b.id, name: b.name, arguments: b.input as Record<string, unknown> }] : [],
  );
  const reasoning = message.content.filter((b) => b.type === 'thinking' || b.type === 'redacted_thinking');
  const thoughts = message.content.flatMap((b) => (b.type === 'thinking' ? [b] : []));
  const u = message.usage;
  const read = u.cache_read_input_tokens ?? 0;
  const created = u.cache_creation_input_tokens ?? 0;
  return {
    text,
    toolCalls,
    finishReason: message.stop_reason ?? null,
    usage: { inputTokens: u.input_tokens + read + created, outputTokens: u.output_tokens, cachedInputTokens: read, cacheCreationInputTokens: created },
    ...(thoughts.length
      ? { thinking: { text: thoughts.map((b) => b.thinking).join('\n\n'), ...(thoughts.length === 1 ? { signature: thoughts[0].signature } : {}) } }
      : {}),
    ...(reasoning.length ? { continuation: { protocol: 'anthropic', blocks: reasoning.map((b) => ({ ...b }) as Record<string, unknown>) } } : {}),
  };
}
