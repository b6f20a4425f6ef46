import type { z } from 'zod';
import type { Protocol } from './types';
import { WIRE_SHAPES } from './wire-shapes';

/** One server-sent event: its `event:` name when it has one, and its `data:` parsed as JSON (or the raw `[DONE]`). */
export interface WireEvent {
  event?: string;
  data: unknown;
}

const issues = (at: string, result: z.ZodSafeParseResult<unknown>) =>
  result.success ? [] : result.error.issues.map((i) => `${at}${i.path.length ? `.${i.path.join('.')}` : ''}: ${i.message}`);

const typeOf = (data: unknown) => (data as { type?: unknown } | null)?.type;

/**
 * What is wrong with a streamed reply, by the reference's rules: each event's shape, and the
 * order the references define (OpenAI's usage chunk and `[DONE]`, the Responses lifecycle, the
 * Messages event sequence, Gemini's last chunk). Empty when the stream is as the provider sends it.
 */
export function wireStreamProblems(protocol: Protocol, events: readonly WireEvent[], options: { includeUsage?: boolean } = {}): string[] {
  if (events.length === 0) return ['the stream has no event'];
  if (protocol === 'openai-chat') return chatStream(events, options.includeUsage === true);
  if (protocol === 'gemini')
    return events
      .flatMap((e, i) => [...(e.event ? [`#${i}: Gemini events are unnamed`] : []), ...issues(`#${i}`, WIRE_SHAPES.gemini.chunk.safeParse(e.data))])
      .concat(geminiEnd(events));
  const shapes: Record<string, z.ZodType> = WIRE_SHAPES[protocol].events;
  const problems = events.flatMap((e, i) => {
    const type = typeOf(e.data);
    if (e.event !== type) return [`#${i}: the event name ${String(e.event)} is not its data's type ${String(type)}`];
    return typeof type === 'string' && shapes[type] ? issues(`#${i} ${type}`, shapes[type].safeParse(e.data)) : [];
  });
  const names = events.map((e) => String(e.event));
  const [first, last] = protocol === 'anthropic' ? ['message_start', 'message_stop'] : ['response.created', 'response.completed'];
  if (names[0] !== first) problems.push(`the stream begins with ${names[0]}, not ${first}`);
  if (names[names.length - 1] !== last) problems.push(`the stream ends with ${names[names.length - 1]}, not ${last}`);
  return protocol === 'anthropic' ? problems.concat(messagesBlockOrder(events)) : problems.concat(responsesOrder(events));
}

function chatStream(events: readonly WireEvent[], includeUsage: boolean): string[] {
  const last = events[events.length - 1];
  const chunks = events.slice(0, -1);
  const problems: string[] = last.data === '[DONE]' ? [] : ['the stream does not end with data: [DONE]'];
  chunks.forEach((e, i) => problems.push(...issues(`#${i}`, WIRE_SHAPES['openai-chat'].chunk.safeParse(e.data))));
  const usages = chunks.map((e) => (e.data as { usage?: unknown }).usage);
  if (!includeUsage) {
    if (usages.some((u) => u != null)) problems.push('usage is sent without stream_options.include_usage');
    return problems;
  }
  // the reference: every chunk carries usage, null except the last, whose choices are empty
  if (usages.some((u) => u === undefined)) problems.push('with include_usage every chunk carries a usage field');
  if (usages.slice(0, -1).some((u) => u !== null && u !== undefined)) problems.push('usage is null on every chunk but the last');
  const final = chunks[chunks.length - 1]?.data as { usage?: unknown; choices?: unknown[] } | undefined;
  if (!final?.usage || final.choices?.length !== 0) problems.push('the last chunk has the usage and an empty choices array');
  return problems;
}

function geminiEnd(events: readonly WireEvent[]): string[] {
  const last = events[events.length - 1].data as { candidates?: { finishReason?: string }[]; usageMetadata?: { candidatesTokenCount?: number } };
  const problems: string[] = [];
  if (!last.candidates?.[0]?.finishReason) problems.push('the last chunk carries the finishReason');
  if (last.usageMetadata?.candidatesTokenCount === undefined) problems.push('the last chunk carries the whole usageMetadata');
  return problems;
}

/** Content blocks open, take deltas of their own kind and close in index order; message_delta comes after the last. */
function messagesBlockOrder(events: readonly WireEvent[]): string[] {
  const problems: string[] = [];
  let open: { index: number; type: string } | null = null;
  let next = 0;
  let delta = false;
  const fits: Record<string, string[]> = { text: ['text_delta'], tool_use: ['input_json_delta'], thinking: ['thinking_delta', 'signature_delta'] };
  for (const e of events) {
    const d = e.data as { type: string; index?: number; content_block?: { type: string }; delta?: { type: string } };
    if (d.type === 'content_block_start') {
      if (open || d.index !== next) problems.push(`content_block_start ${d.index} while ${open ? `block ${open.index} is open` : `block ${next} is next`}`);
      open = { index: d.index ?? -1, type: d.content_block?.type ?? '' };
    } else if (d.type === 'content_block_delta') {
      if (!open || open.index !== d.index) problems.push(`content_block_delta for block ${d.index}, which is not open`);
      else if (!(fits[open.type] ?? []).includes(d.delta?.type ?? '')) problems.push(`a ${d.delta?.type} in a ${open.type} block`);
    } else if (d.type === 'content_block_stop') {
      if (!open || open.index !== d.index) problems.push(`content_block_stop for block ${d.index}, which is not open`);
      open = null;
      next++;
    } else if (d.type === 'message_delta') {
      if (open) problems.push('message_delta while a block is open');
      delta = true;
    }
  }
  if (!delta) problems.push('the stream has no message_delta');
  return problems;
}

/** Each output item is added before it is done; sequence numbers, where sent, count up from 0. */
function responsesOrder(events: readonly WireEvent[]): string[] {
  const problems: string[] = [];
  const added = new Set<unknown>();
  for (const e of events) {
    const d = e.data as { type: string; output_index?: number };
    if (d.type === 'response.output_item.added') added.add(d.output_index);
    if (d.type === 'response.output_item.done' && !added.has(d.output_index)) problems.push(`output item ${d.output_index} is done without being added`);
  }
  const seq = events.map((e) => (e.data as { sequence_number?: unknown }).sequence_number);
  if (seq.some((s) => s !== undefined) && !seq.every((s, i) => s === i)) problems.push('sequence_number counts 0, 1, 2, … over the events');
  return problems;
}

/** The events of a `text/event-stream` body: `event:` and `data:` fields per blank-line-separated block, comments skipped, data JSON-parsed unless `[DONE]`. */
export function parseSse(body: string): WireEvent[] {
  return body
    .split(/\r?\n\r?\n/)
    .map((block) => block.split(/\r?\n/).filter((line) => line !== '' && !line.startsWith(':')))
    .filter((lines) => lines.length > 0)
    .map((lines) => {
      const field = (name: string) => lines.filter((l) => l.startsWith(`${name}:`)).map((l) => l.slice(name.length + 1).replace(/^ /, ''));
      const data = field('data').join('\n');
      const [event] = field('event');
      return { ...(event !== undefined ? { event } : {}), data: data === '[DONE]' ? data : (JSON.parse(data) as unknown) };
    });
}
