import type { RuntimeJob, TurnJobContext } from '../../libs/engine';

/** A turn job's context kept in memory (what a queue driver keeps with the job), for calling handlers directly. */
export function turnContext(
  options: { claimedAttempt?: number | null; attemptsMade?: number; maxAttempts?: number; claimant?: string } = {},
): TurnJobContext & {
  claims: number[];
  /** The runtime jobs `startChildren` was given (a test runs them itself, or not at all). */
  started: RuntimeJob[];
} {
  let claimed = options.claimedAttempt ?? null;
  const claims: number[] = [];
  const started: RuntimeJob[] = [];
  return {
    attemptsMade: options.attemptsMade ?? 0,
    maxAttempts: options.maxAttempts ?? 5,
    ...(options.claimant !== undefined ? { claimant: options.claimant } : {}),
    get claimedAttempt() {
      return claimed;
    },
    async recordClaim(attempt: number) {
      claimed = attempt;
      claims.push(attempt);
    },
    async startChildren(children: RuntimeJob[]) {
      started.push(...children);
    },
    claims,
    started,
  };
}
