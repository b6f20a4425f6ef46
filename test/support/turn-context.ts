import type { TurnJobContext } from '../../libs/engine';

/** A turn job's context kept in memory (what a queue driver keeps with the job), for calling handlers directly. */
export function turnContext(options: { claimedAttempt?: number | null; attemptsMade?: number; maxAttempts?: number } = {}): TurnJobContext & {
  claims: number[];
} {
  let claimed = options.claimedAttempt ?? null;
  const claims: number[] = [];
  return {
    attemptsMade: options.attemptsMade ?? 0,
    maxAttempts: options.maxAttempts ?? 5,
    get claimedAttempt() {
      return claimed;
    },
    async recordClaim(attempt: number) {
      claimed = attempt;
      claims.push(attempt);
    },
    claims,
  };
}
