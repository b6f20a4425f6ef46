import { randomUUID } from 'node:crypto';
import { type NewEvent, SummaryRequest } from '../../events';
import type { SummaryModel, SummaryReply } from '../../plugins-sdk';
import { type EngineMetrics, timedAdapter } from '../metrics';
import type { ModelCall, ProviderRegistry, SlotBinding } from '../../providers';
import { inputHash } from '../journal/input-hash';
import type { ExecutionRun } from '../execution/fenced-append';
import { ATTR, inSpan, SpanKind, SPAN, usageAttributes } from '../../telemetry';

/** The slot a `history.compact@2` provider's summary calls go to (spec §1: the fast model). */
export const SUMMARY_SLOT = 'fast';

export type SummaryModelRequest = { system: string; prompt: string; maxOutputTokens: number };

/**
 * The model call of a summary request (pure: the worker sends it, a rebuild re-derives the same
 * wire body from the recorded request): the provider's system text and prompt as one exchange,
 * without streaming, its output limit capped by the slot's, with what `llm.toml` sets on the slot's
 * requests (`reasoning`; a summary call has no tools).
 */
export function summaryCall(request: SummaryModelRequest, binding: Pick<SlotBinding, 'slot' | 'overrides'>): ModelCall {
  const { slot, overrides } = binding;
  return {
    model: slot.model,
    messages: [
      { role: 'system', content: request.system },
      { role: 'user', content: request.prompt },
    ],
    maxOutputTokens: Math.min(request.maxOutputTokens, slot.maxOutputTokens),
    stream: false,
    ...(overrides.reasoning ? { overrides: { reasoning: overrides.reasoning } } : {}),
    cacheBoundaries: slot.cacheBoundaries,
  };
}

/** A provider's finish reason as the summary model reports it: `length` for a reply cut at its output limit. */
export function summaryFinish(reason: string | null): SummaryReply['finishReason'] {
  if (reason === null) return 'other';
  const r = reason.toLowerCase();
  if (r === 'length' || r === 'max_tokens' || r === 'max_output_tokens') return 'length';
  if (r === 'stop' || r === 'end_turn' || r === 'stop_sequence') return 'stop';
  return 'other';
}

/**
 * The summary model of one compaction barrier, recorded: each request is appended as
 * `compaction.summary-requested@1` (the provider's request and the wire body) before it is sent, and
 * its reply as `compaction.summary-responded@1`. The n-th identical request of a barrier has the
 * key (request hash, n): a retried job re-running the provider gets the recorded reply of the same
 * key and does not call the model again; a request recorded without a reply is sent again.
 */
export class RecordedSummaryModel implements SummaryModel {
  private readonly seen = new Map<string, number>();
  /** Calls this barrier made, replies reused or not. */
  calls = 0;
  /** Calls that went to the model. */
  sent = 0;

  constructor(
    private readonly args: {
      run: ExecutionRun;
      providers: ProviderRegistry;
      /** The provider's plugin. */
      pluginId: string;
      /** Times the summary model's calls (`covel_model_call_*`); absent: not measured. */
      metrics?: EngineMetrics;
    },
  ) {}

  async complete(request: SummaryModelRequest): Promise<SummaryReply> {
    const asked = SummaryRequest.parse({ system: request.system, prompt: request.prompt, maxOutputTokens: request.maxOutputTokens });
    const hash = inputHash(asked);
    const occurrence = (this.seen.get(hash) ?? 0) + 1;
    this.seen.set(hash, occurrence);
    const requestKey = `${hash}#${occurrence}`;
    this.calls++;
    const { run, providers, pluginId } = this.args;
    const recorded = run.execution.summaryCalls.get(requestKey);
    if (recorded?.reply) return { ...recorded.reply };
    const binding = providers.forSlot(SUMMARY_SLOT);
    const { slot, adapter } = binding;
    const body = adapter.buildRequest(summaryCall(asked, binding));
    const ids = { executionId: run.ref.executionId, turnId: run.execution.turnId };
    let requestId = recorded?.requestId;
    if (requestId === undefined) {
      const fresh = randomUUID();
      await run.append((execution) =>
        execution.summaryCalls.has(requestKey)
          ? []
          : [
              {
                type: 'compaction.summary-requested@1',
                data: {
                  ...ids,
                  attempt: run.attempt,
                  requestId: fresh,
                  pluginId,
                  requestKey,
                  request: asked,
                  slot: SUMMARY_SLOT,
                  provider: adapter.protocol,
                  model: slot.model,
                  body: JSON.stringify(body),
                },
              } satisfies NewEvent,
            ],
      );
      requestId = run.execution.summaryCalls.get(requestKey)!.requestId;
      const replied = run.execution.summaryCalls.get(requestKey)!.reply;
      if (replied) return { ...replied };
    }
    this.sent++;
    const response = await inSpan(
      SPAN.summaryCall,
      { kind: SpanKind.CLIENT, attributes: { [ATTR.provider]: adapter.protocol, [ATTR.model]: slot.model, [ATTR.operation]: 'chat' } },
      async (span) => {
        const answered = await timedAdapter(this.args.metrics, adapter, slot.model).send(body);
        span.setAttributes(usageAttributes(answered.usage));
        return answered;
      },
    );
    const reply: SummaryReply = { text: response.text, finishReason: summaryFinish(response.finishReason) };
    const id = requestId;
    await run.append((execution) =>
      [...execution.summaryCalls.values()].some((c) => c.requestId === id && c.reply)
        ? []
        : [
            {
              type: 'compaction.summary-responded@1',
              data: {
                ...ids,
                requestId: id,
                finishReason: reply.finishReason,
                providerFinishReason: response.finishReason,
                text: response.text,
                usage: {
                  inputTokens: response.usage.inputTokens,
                  outputTokens: response.usage.outputTokens,
                  cachedInputTokens: response.usage.cachedInputTokens,
                },
              },
            } satisfies NewEvent,
          ],
    );
    return reply;
  }
}
