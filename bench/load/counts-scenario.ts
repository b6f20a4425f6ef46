import { loadavg } from 'node:os';
import { PlayClient } from '../../apps/play/play-client';
import type { Cleanups } from './cleanups';
import { openCountWindow } from './count-window';
import type { TurnCounts } from './counts';
import { checkExactlyOnce, type ExactlyOnce } from './metrics';
import { reportCrashed } from './noisy';
import type { CountsSpec } from './options';
import { now, runPlayers, type TurnRecord } from './players';
import { startBenchStack } from './stack';
import { readLog } from './verify';
import { warmUp, warmupTurnsOf } from './warmup';

/** One phase of `--scenario counts`: closed-loop sessions of one kind, their round trips per turn. */
export interface CountsPhase {
  /** What the sessions were created with (`{}`: the default narrator-only session). */
  session: { worldId?: string };
  turns: { expected: number; committed: number; failed: number; errors: number };
  log: ExactlyOnce;
  windowMs: number;
  loadAverage: { start: number; end: number };
  counts: TurnCounts;
  errorSamples: string[];
}

export interface CountsResult {
  spec: CountsSpec;
  startedAt: string;
  setupMs: number;
  /** What the processes did in `IDLE_MS` with no turn (background polls and the two reads of /metrics): totals, not per turn. */
  idle: { ms: number; counts: TurnCounts };
  narrator: CountsPhase;
  /** Emberback with every plugin its world installs. */
  emberback: CountsPhase;
  crashed: string[];
}

/** The idle window before the phases: the background's and the scrapes' share of a phase's figures. */
export const IDLE_MS = 5_000;
const NARRATOR = {};
const EMBERBACK = { worldId: 'emberback' };

/**
 * Issue 33's counts on one stack: a few warm-up turns of both kinds (2 per worker of each, or with
 * `--warmup N` N turns of each kind, closed-loop as the phases: processes that ran many turns, as a
 * deployment's have, with V8's compiling of the turn's code mostly behind them), then the narrator-only phase
 * and the Emberback phase, each its own count window (every engine process's counters, CPU and
 * the log's bytes before and after) and its exactly-once check.
 */
export async function runCounts(spec: CountsSpec, options: { cleanups: Cleanups; progress: (line: string) => void }): Promise<CountsResult> {
  const { cleanups, progress } = options;
  const startedAt = new Date().toISOString();
  const setupStart = now();
  const stack = await startBenchStack({ spec, cleanups, log: progress });
  try {
    const client = new PlayClient(stack.baseUrl, stack.apiKey);
    const sessions = async (n: number, body: { worldId?: string }) =>
      (await Promise.all(Array.from({ length: n }, () => client.createSession(body)))).map((s) => s.id);
    const warmOfKind = async (body: { worldId?: string }) => {
      progress(`  warm-up: ${warmupTurnsOf(spec)} turns of ${body.worldId ?? 'narrator-only'} sessions`);
      return warmUp({ client, spec, newSessions: (n) => sessions(n, body), signal: cleanups.signal });
    };
    await warmOfKind(NARRATOR);
    await warmOfKind(EMBERBACK);
    const setupMs = now() - setupStart;

    const phase = async (name: string, body: { worldId?: string }): Promise<CountsPhase> => {
      const ids = await sessions(spec.sessions, body);
      progress(`  ${name}: ${spec.sessions} closed-loop sessions x ${spec.inputs} turns`);
      const load = loadavg()[0];
      const window = await openCountWindow(stack);
      const turns: TurnRecord[] = await runPlayers({ client, sessionIds: ids, inputs: spec.inputs, signal: cleanups.signal });
      const counts = await window.close(turns);
      const loadEnd = loadavg()[0];
      const reading = await readLog({ databaseUrl: stack.databaseUrl, databaseName: stack.databaseName, tenantId: stack.tenantId, turns });
      return {
        session: body,
        turns: {
          expected: spec.sessions * spec.inputs,
          committed: turns.filter((t) => t.outcome === 'committed').length,
          failed: turns.filter((t) => t.outcome === 'failed').length,
          errors: turns.filter((t) => t.outcome === 'error').length,
        },
        log: checkExactlyOnce(reading.sessions),
        windowMs: turns.length ? Math.max(...turns.map((t) => t.endedAt)) - Math.min(...turns.map((t) => t.startedAt)) : 0,
        loadAverage: { start: load, end: loadEnd },
        counts,
        errorSamples: [...new Set(turns.flatMap((t) => (t.error ? [t.error] : [])))].slice(0, 5),
      };
    };
    progress(`  idle: ${IDLE_MS / 1000} s with no turn`);
    const idleWindow = await openCountWindow(stack);
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const idle = { ms: IDLE_MS, counts: await idleWindow.close([], { totals: true }) };
    const narrator = await phase('narrator-only', NARRATOR);
    if (cleanups.interrupted) throw new Error('interrupted');
    const emberback = await phase('Emberback, every plugin', EMBERBACK);
    const crashed = [stack.api, stack.emulator, ...stack.workers].filter((p) => p.exited());
    if (!cleanups.interrupted) for (const p of crashed) progress(`  ${p.name} exited during the run:\n${p.output()}`);
    return { spec, startedAt, setupMs, idle, narrator, emberback, crashed: crashed.map((p) => p.name) };
  } catch (error) {
    reportCrashed(stack, cleanups, progress);
    throw error;
  } finally {
    await stack.stop();
  }
}

/** Every turn of the phase committed exactly once, in order, none failed, lost or refused. */
export function phaseClean(p: CountsPhase): boolean {
  return !p.log.failed && !p.log.duplicated && !p.log.outOfOrder && !p.log.missing && !p.turns.errors && p.log.committed === p.turns.expected;
}
