import { loadavg } from 'node:os';
import { PlayClient } from '../../apps/play/play-client';
import type { Cleanups } from './cleanups';
import { startFlood } from './flood';
import { checkExactlyOnce, type ExactlyOnce, type Spread, spread, throughput } from './metrics';
import type { NoisySpec } from './options';
import { newSessions, now, type RetryCount, retryCounter, runPlayers, type TurnRecord } from './players';
import { type BenchStack, startBenchStack } from './stack';
import { readLog } from './verify';
import { WARMUP_TURNS_PER_WORKER } from './warmup';

/** Tenant B's closed-loop players in one phase (alone, or during A's flood). */
export interface PlayersPhase {
  /** `retries`: requests refused (503/429) and tried again (the turn's latency includes the wait); `rateLimited`: the 429s of them. */
  turns: { expected: number; committed: number; failed: number; errors: number } & RetryCount;
  log: ExactlyOnce;
  /** First POST start to the last turn's end (client clock). */
  windowMs: number;
  /** Client clock: POST start → the long-poll that returned the end. */
  latencyMs: Spread;
  /** Server clock: `player-input.submitted` → `turn.committed`. */
  serverLatencyMs: Spread;
  /** Server clock: `player-input.submitted` → `execution.started` (the wait in the queue). */
  queuedMs: Spread;
  /** The machine's 1-minute load average when the phase started and ended. */
  loadAverage: { start: number; end: number };
  errorSamples: string[];
}

/** Tenant A's flood. */
export interface FloodPhase {
  /** `errors`: inputs not accepted, or whose session's end was not seen; `retries`: requests refused (503/429) and tried again, `rateLimited` the 429s of them. */
  turns: { expected: number; posted: number; errors: number } & RetryCount;
  log: ExactlyOnce;
  /** First POST start → every session's first input answered. */
  startedMs: number;
  /** First POST start → the last input answered (B's phase 2 starts then). */
  postedMs: number;
  /** First POST start → the last session's last turn seen ended (client clock): A's total time. */
  windowMs: number;
  /** Committed turns ÷ window. */
  turnsPerSecond: number;
  serverLatencyMs: Spread;
  queuedMs: Spread;
  loadAverage: { start: number; end: number };
  errorSamples: string[];
}

/** Everything one `--scenario noisy` run measured (bench/results/noisy.json). */
export interface NoisyResult {
  spec: NoisySpec;
  startedAt: string;
  setupMs: number;
  /** Phase 1: B alone. */
  alone: PlayersPhase;
  /** Phase 2: B while A's backlog runs (B starts once all of A's inputs are in). */
  withFlood: PlayersPhase;
  flood: FloodPhase;
  /** B's phase-2 turns that ended before A's last turn did (all of them: B played during the whole flood). */
  playerTurnsDuringFlood: number;
  /** B with the flood ÷ B alone, client clock; null when a phase has no committed turn. */
  ratio: { p50: number | null; p95: number | null };
  crashed: string[];
}

export const FLOOD_TENANT = 'bench-noisy-a';
export const PLAYERS_TENANT = 'bench-noisy-b';

const errorSamples = (turns: readonly TurnRecord[]) => [...new Set(turns.flatMap((t) => (t.error ? [t.error] : [])))].slice(0, 5);
const ratio = (a: number | null, b: number | null) => (a === null || b === null || b === 0 ? null : a / b);

/**
 * Issue 32's noisy neighbour on one stack with two tenants (made through the TenantStore, each its
 * own key): tenant B's closed-loop players alone, then tenant A posts every input of its sessions at
 * once and, once they are all in (its backlog queued), B's players play again on fresh sessions.
 * B's phase measures the queue, not the API's intake of A's posts. Both tenants' turns are
 * checked exactly once and in order from the event log.
 */
export async function runNoisy(spec: NoisySpec, options: { cleanups: Cleanups; progress: (line: string) => void }): Promise<NoisyResult> {
  const { cleanups, progress } = options;
  const startedAt = new Date().toISOString();
  const setupStart = now();
  const stack = await startBenchStack({ spec, cleanups, log: progress, tenantNames: [FLOOD_TENANT, PLAYERS_TENANT] });
  try {
    const [a, b] = stack.tenants;
    const flooder = new PlayClient(stack.baseUrl, a.apiKey);
    const player = new PlayClient(stack.baseUrl, b.apiKey);
    // warm both tenants' paths, outside the phases and the checks
    const warmSessions = WARMUP_TURNS_PER_WORKER * spec.workers;
    const warmup = (
      await Promise.all([
        runPlayers({ client: flooder, sessionIds: await newSessions(flooder, warmSessions), inputs: 1 }),
        runPlayers({ client: player, sessionIds: await newSessions(player, warmSessions), inputs: 1 }),
      ])
    ).flat();
    const warmFailed = warmup.filter((t) => t.outcome !== 'committed');
    if (warmFailed.length) throw new Error(`warm-up turns did not commit: ${warmFailed.map((t) => t.error ?? t.outcome).join('; ')}`);
    const aloneSessions = await newSessions(player, spec.players.sessions);
    const withSessions = await newSessions(player, spec.players.sessions);
    const floodSessions = await newSessions(flooder, spec.flood.sessions);
    const setupMs = now() - setupStart;

    progress(`  phase 1: B alone, ${spec.players.sessions} closed-loop players x ${spec.players.inputs} turns`);
    const aloneLoad = loadavg()[0];
    const playerRetries = retryCounter();
    const playing = { client: player, inputs: spec.players.inputs, signal: cleanups.signal, retryRefused: { onRetry: playerRetries.onRetry } };
    const alone = await runPlayers({ ...playing, sessionIds: aloneSessions });
    const aloneRetries = { ...playerRetries.count };
    const aloneLoadEnd = loadavg()[0];
    if (cleanups.interrupted) throw new Error('interrupted');

    progress(`  phase 2: A posts ${spec.flood.sessions} sessions x ${spec.flood.inputs} inputs at once; B plays once they are all in`);
    const floodLoad = loadavg()[0];
    const floodStart = now();
    const flood = startFlood({ client: flooder, sessionIds: floodSessions, inputs: spec.flood.inputs, signal: cleanups.signal });
    const { atMs: startedMs } = await flood.started;
    progress(`  A's ${spec.flood.sessions} sessions each have a first input in (${Math.round(startedMs)} ms)`);
    const { atMs: postedMs } = await flood.posted;
    progress(`  A's ${spec.flood.sessions * spec.flood.inputs} inputs in (${Math.round(postedMs)} ms); B plays`);
    const withLoad = loadavg()[0];
    const withFlood = await runPlayers({ ...playing, sessionIds: withSessions });
    const withLoadEnd = loadavg()[0];
    progress(`  B done; waiting for A's backlog`);
    const progressTimer = setInterval(() => progress(`  [noisy] A's flood running, ${((now() - floodStart) / 1000).toFixed(0)} s`), 10_000);
    let floodDone: Awaited<typeof flood.done>;
    try {
      floodDone = await flood.done;
    } finally {
      clearInterval(progressTimer);
    }
    const floodLoadEnd = loadavg()[0];
    const crashed = [stack.api, stack.emulator, ...stack.workers].filter((p) => p.exited());
    if (!cleanups.interrupted) for (const p of crashed) progress(`  ${p.name} exited during the run:\n${p.output()}`);

    const read = (tenantId: string, turns: TurnRecord[]) => readLog({ databaseUrl: stack.databaseUrl, databaseName: stack.databaseName, tenantId, turns });
    const [aloneLog, withLog, floodLog] = [await read(b.id, alone), await read(b.id, withFlood), await read(a.id, floodDone.turns)];
    const playersPhase = (turns: TurnRecord[], reading: typeof aloneLog, load: { start: number; end: number }, retries: RetryCount): PlayersPhase => {
      const committed = turns.filter((t) => t.outcome === 'committed');
      return {
        turns: {
          expected: spec.players.sessions * spec.players.inputs,
          committed: committed.length,
          failed: turns.filter((t) => t.outcome === 'failed').length,
          errors: turns.filter((t) => t.outcome === 'error').length,
          ...retries,
        },
        log: checkExactlyOnce(reading.sessions),
        windowMs: turns.length ? Math.max(...turns.map((t) => t.endedAt)) - Math.min(...turns.map((t) => t.startedAt)) : 0,
        latencyMs: spread(committed.map((t) => t.endedAt - t.startedAt)),
        serverLatencyMs: spread(reading.serverLatenciesMs),
        queuedMs: spread(reading.stepsMs.queued),
        loadAverage: load,
        errorSamples: errorSamples(turns),
      };
    };
    const alonePhase = playersPhase(alone, aloneLog, { start: aloneLoad, end: aloneLoadEnd }, aloneRetries);
    const withPhase = playersPhase(
      withFlood,
      withLog,
      { start: withLoad, end: withLoadEnd },
      { retries: playerRetries.count.retries - aloneRetries.retries, rateLimited: playerRetries.count.rateLimited - aloneRetries.rateLimited },
    );
    const floodLogCheck = checkExactlyOnce(floodLog.sessions);
    const floodWindowMs = floodDone.endedAt - floodStart;
    return {
      spec,
      startedAt,
      setupMs,
      alone: alonePhase,
      withFlood: withPhase,
      flood: {
        turns: {
          expected: spec.flood.sessions * spec.flood.inputs,
          posted: floodDone.turns.filter((t) => t.executionId !== null).length,
          errors: floodDone.turns.filter((t) => t.outcome === 'error').length,
          retries: floodDone.retries,
          rateLimited: floodDone.rateLimited,
        },
        log: floodLogCheck,
        startedMs,
        postedMs,
        windowMs: floodWindowMs,
        turnsPerSecond: throughput(floodLogCheck.committed, floodWindowMs),
        serverLatencyMs: spread(floodLog.serverLatenciesMs),
        queuedMs: spread(floodLog.stepsMs.queued),
        loadAverage: { start: floodLoad, end: floodLoadEnd },
        errorSamples: errorSamples(floodDone.turns),
      },
      playerTurnsDuringFlood: withFlood.filter((t) => t.endedAt <= floodDone.endedAt).length,
      ratio: { p50: ratio(withPhase.latencyMs.p50, alonePhase.latencyMs.p50), p95: ratio(withPhase.latencyMs.p95, alonePhase.latencyMs.p95) },
      crashed: crashed.map((p) => p.name),
    };
  } catch (error) {
    reportCrashed(stack, cleanups, progress);
    throw error;
  } finally {
    await stack.stop();
  }
}

/** Tells `progress` each process of the stack that has exited, with its output (not when interrupted). */
export function reportCrashed(stack: BenchStack, cleanups: Cleanups, progress: (line: string) => void) {
  const crashed = [stack.api, stack.emulator, ...stack.workers].filter((p) => p.exited());
  if (crashed.length && !cleanups.interrupted) progress(crashed.map((p) => `${p.name} exited:\n${p.output()}`).join('\n'));
}

/** Both tenants' turns committed exactly once, in order, none failed, lost or refused. */
export function exactlyOnce(r: NoisyResult): { flood: boolean; players: boolean } {
  const clean = (log: ExactlyOnce) => !log.failed && !log.duplicated && !log.outOfOrder && !log.missing;
  const floodOk = clean(r.flood.log) && !r.flood.turns.errors && r.flood.log.committed === r.flood.turns.expected;
  const phaseOk = (p: PlayersPhase) => clean(p.log) && !p.turns.errors && !p.turns.failed && p.log.committed === p.turns.expected;
  return { flood: floodOk, players: phaseOk(r.alone) && phaseOk(r.withFlood) };
}
