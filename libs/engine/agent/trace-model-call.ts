import type { ModelResponse } from '../../providers';
import { ATTR, inSpan, SPAN, SpanKind, usageAttributes } from '../../telemetry';

/**
 * A model call's span (libs/telemetry): provider, model, the call id (the fallback's, when the
 * streamed call went again without streaming), token counts and finish reason; a failed call
 * (the provider's error, after the SDK's own retries) marks it ERROR.
 */
export function traceModelCall<T extends { response: ModelResponse; callId: string }>(
  call: { provider: string; model: string; callId: string },
  send: () => Promise<T>,
): Promise<T> {
  const attributes = { [ATTR.provider]: call.provider, [ATTR.model]: call.model, [ATTR.operation]: 'chat', [ATTR.callId]: call.callId };
  return inSpan(SPAN.modelCall, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    const sent = await send();
    span.setAttributes({
      ...usageAttributes(sent.response.usage),
      [ATTR.callId]: sent.callId,
      ...(sent.response.finishReason ? { [ATTR.finishReason]: sent.response.finishReason } : {}),
    });
    return sent;
  });
}
