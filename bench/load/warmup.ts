import type { PlayClient } from '../../apps/play/play-client';
import { runPlayers, type TurnRecord } from './players';

/** Warm-up turns per worker when `--warmup` is not given: a few, so connections and code paths are warm. */
export const WARMUP_TURNS_PER_WORKER = 2;

/** How many warm-up turns a run plays (of each kind, in the counts scenario): `--warmup`'s, else 2 per worker. */
export function warmupTurnsOf(spec: { workers: number; warmupTurns?: number }): number {
  return spec.warmupTurns ?? WARMUP_TURNS_PER_WORKER * spec.workers;
}

/** How the warm-up turns are played: `players` sessions, each `each` turns, the first `longer` of them one more. */
export function warmupPlan(spec: { workers: number; sessions: number; warmupTurns?: number }): { players: number; each: number; longer: number } {
  const total = warmupTurnsOf(spec);
  const players = spec.warmupTurns === undefined ? total : Math.min(total, spec.sessions);
  return { players, each: Math.floor(total / players), longer: total % players };
}

/**
 * Plays a run's warm-up turns, outside its window and its checks. Without `--warmup`: one turn on
 * each of 2 new sessions per worker. With `--warmup N`: exactly N closed-loop turns (as the measured
 * part plays them) on at most the run's number of new sessions, for warm processes. Throws when one
 * did not commit.
 */
export async function warmUp(options: {
  client: PlayClient;
  spec: { workers: number; sessions: number; warmupTurns?: number };
  newSessions: (n: number) => Promise<string[]>;
  signal?: AbortSignal;
}): Promise<TurnRecord[]> {
  const { client, spec, signal } = options;
  const { players, each, longer } = warmupPlan(spec);
  const ids = await options.newSessions(players);
  const played = (
    await Promise.all([
      runPlayers({ client, sessionIds: ids.slice(0, longer), inputs: each + 1, signal }),
      runPlayers({ client, sessionIds: ids.slice(longer), inputs: each, signal }),
    ])
  ).flat();
  const failed = played.filter((t) => t.outcome !== 'committed');
  if (failed.length) throw new Error(`warm-up turns did not commit: ${failed.map((t) => t.error ?? t.outcome).join('; ')}`);
  return played;
}
