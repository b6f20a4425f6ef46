import { annotate, ATTR, inJobSpan, inRootSpan, SPAN, withTraceCarrier } from '../../telemetry';
import type { JobAttempt, JobOutcome, RuntimeJob, TurnProducer, TurnJob, TurnJobContext, TurnStep } from '../queue';

/**
 * The spans of a worker's jobs (libs/telemetry): each run of a turn job, and each runtime job, is a
 * span under the span that enqueued it (the API request, or the turn job's run that started the
 * stage). The runtime jobs a run starts carry that run's span as their parent.
 */
const jobIds = (job: TurnJob) => ({ [ATTR.tenant]: job.tenantId, [ATTR.session]: job.sessionId, [ATTR.execution]: job.executionId });

/** `inline`: the `plugin/runtime`s the run ran inline (stages of one runtime), filled while it runs. */
export function turnJobSpan(job: TurnJob, ctx: TurnJobContext, run: () => Promise<TurnStep>, inline: readonly string[] = []): Promise<TurnStep> {
  const attributes = { ...jobIds(job), [ATTR.jobTry]: ctx.attemptsMade + 1, ...(ctx.claimedAttempt !== null ? { [ATTR.attempt]: ctx.claimedAttempt } : {}) };
  return inJobSpan(SPAN.turnJob, job.trace, attributes, async () => {
    let step: TurnStep;
    try {
      step = await run();
    } finally {
      if (inline.length) annotate({ [ATTR.stageRuntimes]: [...inline] });
    }
    annotate({ [ATTR.step]: step.kind, ...(ctx.claimedAttempt !== null ? { [ATTR.attempt]: ctx.claimedAttempt } : {}) });
    if (step.kind !== 'awaitChildren') return step;
    // one stage: its runtime jobs are children of this run's span (a re-added child keeps its first parent)
    annotate({ [ATTR.stageRuntimes]: [...inline, ...step.children.map((c) => `${c.pluginId}/${c.runtimeId}`)] });
    return { ...step, children: step.children.map((child) => withTraceCarrier(child)) };
  });
}

export function runtimeJobSpan(job: RuntimeJob, attempt: JobAttempt, run: () => Promise<JobOutcome>): Promise<JobOutcome> {
  const attributes = {
    ...jobIds(job),
    [ATTR.attempt]: job.attempt,
    [ATTR.plugin]: job.pluginId,
    [ATTR.runtime]: job.runtimeId,
    [ATTR.jobTry]: attempt.attemptsMade + 1,
  };
  return inJobSpan(SPAN.runtimeJob, job.trace, attributes, run);
}

/**
 * Enqueues a turn the engine starts by itself (`by`: the hand-off to a session's next input, or the
 * sweeper) in a root span of its own: the job carries it, so every run of the turn job is in that one
 * trace (without it each run would start a trace of its own).
 */
export function enqueueInOwnTrace(queue: Pick<TurnProducer, 'enqueue'>, job: TurnJob, by: 'hand-off' | 'sweeper'): Promise<void> {
  return inRootSpan(SPAN.turnEnqueue, { ...jobIds(job), [ATTR.enqueuedBy]: by }, async () => {
    await queue.enqueue(job);
  });
}
