import type { PlayClient } from '../../apps/play/play-client';
import { now, type RetryCount, retryCounter, submitRetrying, type TurnRecord, waitRetrying } from './players';

export interface FloodOptions {
  client: PlayClient;
  sessionIds: string[];
  /** Inputs per session, posted one after another (each POST waits for the one before it, not for its turn). */
  inputs: number;
  /** A session whose last input has not ended by then counts its unended turns as errors. */
  timeoutMs?: number;
  /** When aborted, no further input is posted and no further end awaited. */
  signal?: AbortSignal;
}

export interface Flood {
  /** Resolves once every session's first input was posted (accepted or refused): all of A's sessions have a turn waiting. */
  started: Promise<{ atMs: number }>;
  /** Resolves once every input was posted (accepted or refused): the backlog is in. */
  posted: Promise<{ atMs: number }>;
  /** Resolves once every session's last accepted input has ended: one record per input; `retries`: refused requests tried again, `rateLimited` the 429s of them. */
  done: Promise<{ turns: TurnRecord[]; endedAt: number } & RetryCount>;
}

/**
 * A tenant flooding the queue: all sessions at once, each posting its `inputs` inputs in a row
 * without waiting for a turn (the engine runs them one at a time, in that order), then waiting
 * for its last one to end. A session's turns end in order, so the last one's end is the session's.
 * Each record's `endedAt` is its session's end (per-turn times come from the event log); its
 * `outcome` is the last turn's (the exactly-once check reads the log for each turn). A POST or a
 * long-poll refused with 503 (the API's connection pool saturated by the flood itself) is tried
 * again after its `Retry-After`, a POST with the same `Idempotency-Key`, so it is recorded once.
 */
export function startFlood(options: FloodOptions): Flood {
  const start = now();
  const deadline = start + (options.timeoutMs ?? 900_000);
  const { count, onRetry } = retryCounter();
  let resolvePosted!: (v: { atMs: number }) => void;
  const posted = new Promise<{ atMs: number }>((r) => (resolvePosted = r));
  let firstsLeft = options.sessionIds.length;
  let resolveStarted!: (v: { atMs: number }) => void;
  const started = new Promise<{ atMs: number }>((r) => (resolveStarted = r));
  const firstDone = () => {
    if (--firstsLeft === 0) resolveStarted({ atMs: now() - start });
  };
  if (firstsLeft === 0) resolveStarted({ atMs: 0 });
  const postings = options.sessionIds.map(async (sessionId, player) => {
    const records: TurnRecord[] = [];
    for (let input = 0; input < options.inputs && !options.signal?.aborted; input++) {
      if (input === 1) firstDone();
      const startedAt = now();
      try {
        const { executionId, turnId } = await submitRetrying({
          client: options.client,
          sessionId,
          text: `flood ${player} move ${input}: look around the square`,
          deadline,
          onRetry,
        });
        records.push({ player, sessionId, input, executionId, turnId, startedAt, endedAt: startedAt, outcome: 'committed', polls: 0 });
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        records.push({ player, sessionId, input, executionId: null, turnId: null, startedAt, endedAt: now(), outcome: 'error', error: message, polls: 0 });
      }
    }
    if (records.length < 2) firstDone();
    return records;
  });
  void Promise.all(postings).then(() => resolvePosted({ atMs: now() - start }));
  const done = (async () => {
    const sessions = await Promise.all(
      postings.map(async (p) => {
        const records = await p;
        const accepted = records.filter((r) => r.executionId !== null);
        const last = accepted.at(-1);
        if (!last || options.signal?.aborted) return records;
        const ended = await waitRetrying(options.client, last.executionId!, deadline, onRetry).catch((error: unknown) => ({
          outcome: 'error' as const,
          polls: 0,
          error: error instanceof Error ? error.message : String(error),
        }));
        const endedAt = now();
        for (const r of accepted) {
          r.endedAt = endedAt;
          r.polls = r === last ? ended.polls : 0;
          if (ended.outcome === 'error') {
            r.outcome = 'error';
            r.error = ended.error;
          }
        }
        if (ended.outcome === 'failed') last.outcome = 'failed';
        return records;
      }),
    );
    const turns = sessions.flat();
    return { turns, endedAt: Math.max(start, ...turns.map((t) => t.endedAt)), ...count };
  })();
  return { started, posted, done };
}
