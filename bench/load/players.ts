import type { PlayClient } from '../../apps/play/play-client';

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
}

export const now = () => performance.timeOrigin + performance.now();

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
    ({ executionId, turnId } = await client.submit(at.sessionId, `player ${at.player} move ${at.input}: look around the square`));
    for (;;) {
      const left = deadline - now();
      if (left <= 0) return end('error', `still not ended after ${options.turnTimeoutMs ?? 600_000} ms`);
      polls++;
      const { status, error } = await client.execution(executionId, Math.max(0, Math.min(LONG_POLL_MS, Math.floor(left))));
      if (status === 'committed') return end('committed');
      if (status === 'failed') return end('failed', error?.message ?? 'failed');
    }
  } catch (error) {
    return end('error', error instanceof Error ? error.message : String(error));
  }
}
