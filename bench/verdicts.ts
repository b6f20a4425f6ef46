/** A bench's target and whether this run met it. */
export interface Verdict {
  bench: string;
  target: string;
  ok: boolean;
}

/**
 * `npm run bench`'s verdicts, one line each. The exit code: 1 when a target was missed (the run's
 * results and docs are written first), 0 otherwise or under `--no-verdict` (`enforce: false`).
 */
export function verdictExitCode(
  verdicts: readonly Verdict[],
  options: {
    enforce: boolean;
    log: (line: string) => void;
    /** The words before a met and a missed target (default ok, MISSED). */ words?: { ok: string; missed: string };
  },
): 0 | 1 {
  if (verdicts.length === 0) return 0;
  const words = options.words ?? { ok: 'ok', missed: 'MISSED' };
  const width = Math.max(words.ok.length, words.missed.length);
  options.log('\nverdicts:');
  for (const v of verdicts) options.log(`  ${(v.ok ? words.ok : words.missed).padEnd(width)} ${v.bench}: ${v.target}`);
  const missed = verdicts.filter((v) => !v.ok);
  if (missed.length === 0) return 0;
  if (!options.enforce) {
    options.log(`${missed.length} target(s) missed; --no-verdict: exit code 0`);
    return 0;
  }
  options.log(`${missed.length} target(s) missed (${[...new Set(missed.map((v) => v.bench))].join(', ')}): exit code 1 (--no-verdict to skip)`);
  return 1;
}
