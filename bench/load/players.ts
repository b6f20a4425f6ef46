import { randomUUID } from 'node:crypto';
import { ApiError, type PlayClient } from '../../apps/play/play-client';

/** One long-poll's wait (the API allows up to 30 s). */
const LONG_POLL_MS = 25_000;

/** One turn as the client saw it: POST start to the long-poll that answered its end. */
export interface TurnRecord {
  /** The player's number, 0-based. */
  player: number;
  sessionId: string;
  /** Its place in the session, 0-based: the order it was submitted in. */
  input: number;
  executionId: string | null;
  turnId: string | null;
  /** Client clock, ms since the epoch (high resolution). */
  startedAt: number;
  endedAt: number;
  outcome: 'committed' | 'failed' | 'error';
  error?: string;
  /** GET requests this turn took (1 when the first long-poll saw it end). */
  polls: number;
}

export interface PlayersOptions {
  client: PlayClient;
  /** One closed-loop player per session. */
  sessionIds: string[];
  inputs: number;
  /** A turn not ended after this long counts as an error (and the player goes on). */
  turnTimeoutMs?: number;
  onTurn?: (turn: TurnRecord) => void;
  /** When aborted, each player stops before its next input. */
  signal?: AbortSignal;
  /**
   * A POST or long-poll refused with 503/429 is tried again after its Retry-After (a POST with the same
   * Idempotency-Key); the turn's latency includes the waits. Off: a refusal is the turn's error.
   */
  retryRefused?: { onRetry: OnRetry };
}

/** Told of each refused request tried again: its status (429: the tenant's rate limit; 503: an overloaded API), null when there was no answer. */
export type OnRetry = (status: number | null) => void;

/** Requests refused and tried again, and the 429s among them (the rate limit: the default should never touch a bench). */
export interface RetryCount {
  retries: number;
  rateLimited: number;
}

/** A `RetryCount` and the `OnRetry` that counts into it. */
export function retryCounter(): { count: RetryCount; onRetry: OnRetry } {
  const count: RetryCount = { retries: 0, rateLimited: 0 };
  return {
    count,
    onRetry: (status) => {
      count.retries++;
      if (status === 429) count.rateLimited++;
    },
  };
}

export const now = () => performance.timeOrigin + performance.now();

/** Between two tries of a refused request when the answer names no Retry-After. */
const RETRY_MS = 1_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** 503 (the API's pool is saturated, `Retry-After`) or 429: worth the same request again. */
const retryable = (status: number) => status === 503 || status === 429;

/** `n` new sessions of the client's tenant (the default world), made at once. */
export async function newSessions(client: PlayClient, n: number): Promise<string[]> {
  return (await Promise.all(Array.from({ length: n }, () => client.createSession()))).map((s) => s.id);
}

/**
 * Closed-loop players: each posts an input, waits for its turn to end (long-poll), then posts the
 * next, `inputs` times. A failed or erroring turn is recorded and the player goes on (until `signal`).
 */
export async function runPlayers(options: PlayersOptions): Promise<TurnRecord[]> {
  const turns: TurnRecord[] = [];
  await Promise.all(
    options.sessionIds.map(async (sessionId, player) => {
      for (let input = 0; input < options.inputs && !options.signal?.aborted; input++) {
        const turn = await playTurn(options, { player, sessionId, input });
        turns.push(turn);
        options.onTurn?.(turn);
      }
    }),
  );
  return turns;
}

/** Long-polls the execution until it has ended (or `deadline`, client clock, passes). */
export async function waitForEnd(
  client: PlayClient,
  executionId: string,
  deadline: number,
): Promise<{ outcome: 'committed' | 'failed' | 'error'; polls: number; error?: string }> {
  let polls = 0;
  for (;;) {
    const left = deadline - now();
    if (left <= 0) return { outcome: 'error', polls, error: 'still not ended at the deadline' };
    polls++;
    const { status, error } = await client.execution(executionId, Math.max(0, Math.min(LONG_POLL_MS, Math.floor(left))));
    if (status === 'committed') return { outcome: 'committed', polls };
    if (status === 'failed') return { outcome: 'failed', polls, error: error?.message ?? 'failed' };
  }
}

async function playTurn(options: PlayersOptions, at: { player: number; sessionId: string; input: number }): Promise<TurnRecord> {
  const { client } = options;
  const startedAt = now();
  const deadline = startedAt + (options.turnTimeoutMs ?? 600_000);
  let executionId: string | null = null;
  let turnId: string | null = null;
  let polls = 0;
  const end = (outcome: TurnRecord['outcome'], error?: string): TurnRecord => ({
    ...at,
    executionId,
    turnId,
    startedAt,
    endedAt: now(),
    outcome,
    polls,
    ...(error === undefined ? {} : { error }),
  });
  try {
    const text = `player ${at.player} move ${at.input}: look around the square`;
    const retry = options.retryRefused;
    ({ executionId, turnId } = retry
      ? await submitRetrying({ client, sessionId: at.sessionId, text, deadline, onRetry: retry.onRetry })
      : await client.submit(at.sessionId, text));
    const ended = retry ? await waitRetrying(client, executionId, deadline, retry.onRetry) : await waitForEnd(client, executionId, deadline);
    polls = ended.polls;
    return end(ended.outcome, ended.outcome === 'error' ? `still not ended after ${options.turnTimeoutMs ?? 600_000} ms` : ended.error);
  } catch (error) {
    return end('error', error instanceof Error ? error.message : String(error));
  }
}

/** `POST /v1/sessions/:id/inputs` with an `Idempotency-Key`, tried again (same key) while it is refused with 503/429 or gets no answer. */
export async function submitRetrying(options: {
  client: PlayClient;
  sessionId: string;
  text: string;
  deadline: number;
  onRetry: OnRetry;
}): Promise<{ executionId: string; turnId: string }> {
  const key = randomUUID();
  for (;;) {
    let res: Response | null = null;
    try {
      res = await fetch(`${options.client.baseUrl}/v1/sessions/${options.sessionId}/inputs`, {
        method: 'POST',
        headers: { ...options.client.authHeaders(), 'content-type': 'application/json', 'Idempotency-Key': key },
        body: JSON.stringify({ text: options.text }),
      });
    } catch (error) {
      if (now() >= options.deadline) throw error;
    }
    if (res?.ok) return (await res.json()) as { executionId: string; turnId: string };
    if (res && !retryable(res.status)) {
      const body = (await res.json().catch(() => ({}))) as { message?: string; code?: string };
      throw new ApiError(`POST /v1/sessions/${options.sessionId}/inputs: ${res.status} ${body.message ?? ''}`.trim(), res.status, body.code ?? null);
    }
    if (now() >= options.deadline) throw new Error(`POST /v1/sessions/${options.sessionId}/inputs: still refused (${res?.status}) at the deadline`);
    options.onRetry(res?.status ?? null);
    await res?.body?.cancel().catch(() => undefined);
    const after = Number(res?.headers.get('retry-after'));
    await sleep(Number.isFinite(after) && after > 0 ? Math.min(after * 1000, 10_000) : RETRY_MS);
  }
}

/** waitForEnd, its long-poll tried again while it is refused with 503/429. */
export async function waitRetrying(client: PlayClient, executionId: string, deadline: number, onRetry: OnRetry) {
  for (;;) {
    try {
      return await waitForEnd(client, executionId, deadline);
    } catch (error) {
      if (!(error instanceof ApiError && retryable(error.status)) || now() >= deadline) throw error;
      onRetry(error.status);
      await sleep(RETRY_MS);
    }
  }
}
