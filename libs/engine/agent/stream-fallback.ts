import { randomUUID } from 'node:crypto';
import { type ModelCall, type ModelResponse, type ProviderAdapter, ProviderError } from '../../providers';
import { traceModelCall } from './trace-model-call';

/**
 * Sends a step's request (recorded already). When it was streamed and failed where a call without
 * streaming may not (`ProviderError.stream`: the provider refused streaming, or the stream broke
 * before any text delta), the step goes once more without streaming: that request is recorded
 * first as its own `llm.calling@1` (`fallback: 'non-streaming'`, which the rebuild re-derives from
 * the same inputs), then sent. Any other failure, and any failure of the fallback, is thrown as it is.
 */
export function sendWithFallback(args: SendArgs): Promise<{ response: ModelResponse; callId: string }> {
  return traceModelCall({ provider: args.adapter.protocol, model: args.call.model, callId: args.callId }, () => send(args));
}

interface SendArgs {
  adapter: ProviderAdapter;
  call: ModelCall;
  body: Record<string, unknown>;
  /** `JSON.stringify(body)`, when the caller made it (`SendOptions.json`): the first send's bytes. */
  json?: string;
  callId: string;
  signal?: AbortSignal;
  /** Each text delta of the streamed call (the non-streaming fallback has none). */
  onText?: (delta: string) => void;
  /** Records the fallback's `llm.calling@1` (before it is sent). */
  record: (fallback: { callId: string; body: Record<string, unknown> }) => Promise<void>;
}

async function send(args: SendArgs): Promise<{ response: ModelResponse; callId: string }> {
  const options = args.signal ? { signal: args.signal } : undefined;
  try {
    const sent = args.json === undefined ? options : { ...options, json: args.json };
    const streamed = args.onText && args.call.stream ? { ...sent, onText: args.onText } : sent;
    return { response: await args.adapter.send(args.body, streamed), callId: args.callId };
  } catch (error) {
    if (!args.call.stream || !(error instanceof ProviderError) || error.stream === undefined) throw error;
  }
  const fallback = { callId: randomUUID(), body: args.adapter.buildRequest({ ...args.call, stream: false }) };
  await args.record(fallback);
  return { response: await args.adapter.send(fallback.body, options), callId: fallback.callId };
}
