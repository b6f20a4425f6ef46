import { type TurnDeadlineError } from '../errors';

/**
 * A turn's deadline within one job attempt (`COVEL_TURN_DEADLINE_MS`). It bounds the time the
 * attempt spends waiting on its model: the clock is this worker's own monotonic one (a timer,
 * never the database's recording time), started by `arm()` when the attempt
 * sends its first model call. Time the turn spends queued, waiting for a database that is away,
 * for a worker to restart or for a suspended tool's resume is not counted, and nothing fails
 * before the attempt has sent a call; a provider that never answers still fails the turn within
 * one deadline (its `PROVIDER_DEADLINE`, and this one, are permanent: no retry starts a new clock).
 */
export interface TurnDeadline {
  /** Aborts, with the `TurnDeadlineError` as its reason, `deadlineMs` after the first `arm()`. */
  readonly signal: AbortSignal;
  /** Starts the clock (the attempt sends a model call); later calls keep the first start. */
  arm(): void;
  /** Stops the clock (the attempt ended). */
  clear(): void;
}

export function turnDeadline(options: { deadlineMs: number; failure: () => TurnDeadlineError }): TurnDeadline {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  return {
    signal: controller.signal,
    arm() {
      if (timer !== undefined) return;
      timer = setTimeout(() => controller.abort(options.failure()), options.deadlineMs);
    },
    clear() {
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
