import type { EventData, EventStore, LlmUsage, StoredEvent } from '../../events';
import type { GenerationInputs, RecordedReply } from './generation-plan';

/** One recorded call of a job: what was sent (`call-requested`) and, once answered, the reply (`call-responded`). */
export interface JobCall {
  request: EventData<'world-generation.call-requested@1'>;
  reply: (RecordedReply & { usage: LlmUsage }) | null;
}

/** A world generation job as its stream tells it. */
export interface JobLog {
  jobId: string;
  tenantId: string;
  /** The stream's version (the next append's expected version). */
  version: number;
  inputs: GenerationInputs;
  /** The recorded calls, by round (round n at index n). */
  calls: JobCall[];
  /** How the job ended; null while it runs. */
  outcome: { kind: 'completed'; worldId: string } | { kind: 'failed'; code: string; reason: string } | null;
}

/** The job's stream folded (null: no such job, or not this tenant's). */
export async function readJobLog(store: Pick<EventStore, 'readStream'>, tenantId: string, jobId: string): Promise<JobLog | null> {
  return foldJobLog(await store.readStream(jobId), tenantId);
}

export function foldJobLog(events: readonly StoredEvent[], tenantId: string): JobLog | null {
  const first = events[0];
  if (first?.type !== 'world-generation.requested@1' || first.tenantId !== tenantId) return null;
  const log: JobLog = { jobId: first.streamId, tenantId, version: 0, inputs: first.data, calls: [], outcome: null };
  for (const event of events) {
    log.version = event.streamVersion;
    if (event.type === 'world-generation.call-requested@1') log.calls[event.data.round] = { request: event.data, reply: null };
    else if (event.type === 'world-generation.call-responded@1') {
      const call = log.calls.find((c) => c?.request.callId === event.data.callId);
      if (call) call.reply = { text: event.data.text, finishReason: event.data.finishReason, usage: event.data.usage };
    } else if (event.type === 'world-generation.completed@1') log.outcome = { kind: 'completed', worldId: event.data.worldId };
    else if (event.type === 'world-generation.failed@1') log.outcome = { kind: 'failed', code: event.data.code, reason: event.data.reason };
  }
  return log;
}

/** The replies recorded in round order, up to the first call still unanswered. */
export function recordedReplies(log: JobLog): RecordedReply[] {
  const replies: RecordedReply[] = [];
  for (const call of log.calls) {
    if (!call?.reply) break;
    replies.push({ text: call.reply.text, finishReason: call.reply.finishReason });
  }
  return replies;
}
