import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import type { Verdict } from '../verdicts';

/** A `--scenario` run's JSON: the run, the machine it ran on and the commit it measured, the verdicts. */
export interface ScenarioJson<Name extends string, Run> {
  name: Name;
  date: string;
  node: string;
  cores: number;
  cpu: string | null;
  /** `git rev-parse --short HEAD` of the checkout that ran (null outside git), and whether it had changes. */
  commit: string | null;
  verdicts: Verdict[];
  run: Run;
}

/** bench/results/load-<name>-<ISO time>.json: every scenario run's own file (not committed: `load-*.json`). */
export function scenarioResultsFile(name: string, startedAt: Date): string {
  return join(__dirname, '..', 'results', `load-${name}-${startedAt.toISOString().replace(/:/g, '-')}.json`);
}

/** `git rev-parse --short HEAD` of this checkout, `(with changes)` when it has any; null outside git. */
export function gitCommit(): string | null {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: __dirname, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: __dirname, encoding: 'utf8' }).trim() !== '';
    return dirty ? `${head} (with changes)` : head;
  } catch {
    return null;
  }
}

/** Writes the scenario's JSON (and returns it). */
export function writeScenarioResults<Name extends string, Run>(file: string, name: Name, run: Run, verdicts: Verdict[]): ScenarioJson<Name, Run> {
  const json: ScenarioJson<Name, Run> = {
    name,
    date: new Date().toISOString(),
    node: process.version,
    cores: cpus().length,
    cpu: cpus()[0]?.model ?? null,
    commit: gitCommit(),
    verdicts,
    run,
  };
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
  return json;
}
