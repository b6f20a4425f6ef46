import { constants } from 'node:os';

/** Runs a process entry point: an error is printed as one line and exits 1. */
export function runMain(main: () => Promise<void>): void {
  main().catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}

/** Something a stopping process closes (the API, the worker, the engine, the trace exporter...). */
export interface Closable {
  close(): Promise<unknown>;
}

/**
 * How long the same signal repeated counts as the one stop already under way: `npm start` in a
 * terminal gets Ctrl-C twice (from the terminal, and forwarded by npm, which got it too).
 */
export const REPEATED_SIGNAL_MS = 1_000;

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

export interface CloseOnSignalsOptions {
  /** Where the stop's two lines go (signal received, stopped in N ms). */
  log: (line: string) => void;
}

/**
 * The one shutdown path of every process (`npm start`, `start:api`, `start:worker`). On the first
 * SIGTERM or SIGINT: closes each in order, once, each waiting for the previous one (the API stops
 * answering; the worker stops taking jobs and lets the running ones end within
 * `COVEL_SHUTDOWN_GRACE_MS`, hands back the rest; the stores close, the data directory's lock is
 * released, the pending spans are flushed), then exits 0, or 1 when a step failed. Another signal
 * while stopping (later than `REPEATED_SIGNAL_MS` after the first) exits at once, 128 + its number,
 * as the signal itself would: running jobs are then recovered as after a crash.
 * NestJS's own shutdown hooks are not enabled (`enableShutdownHooks`): they re-raise the signal once
 * the app is closed, which kills the process before the rest is closed.
 */
export function closeOnSignals(closables: readonly Closable[], options: CloseOnSignalsOptions): void {
  let first: { signal: NodeJS.Signals; at: number } | null = null;
  const stop = async (signal: NodeJS.Signals) => {
    if (first) {
      if (signal === first.signal && Date.now() - first.at < REPEATED_SIGNAL_MS) return;
      options.log(`${signal} while stopping: exiting now`);
      process.exit(128 + constants.signals[signal]);
    }
    first = { signal, at: Date.now() };
    options.log(`${signal}: stopping (a second signal exits at once)`);
    let failed = false;
    for (const c of closables) {
      await c.close().catch((e) => {
        failed = true;
        console.error(`while stopping: ${String(e)}`);
      });
    }
    options.log(`stopped in ${Date.now() - first.at} ms`);
    process.exit(failed ? 1 : 0);
  };
  for (const signal of SIGNALS) process.on(signal, (s: NodeJS.Signals) => void stop(s));
}

/**
 * On SIGHUP, reads the plugin folders again (`engine.reloadPlugins()`): executions started from
 * then on use the new registry generation, running ones finish with theirs. A failed reload (a bad
 * manifest or entry) is logged and changes nothing.
 */
export function reloadPluginsOnHangup(engine: { reloadPlugins(): Promise<unknown> }): void {
  process.on('SIGHUP', () => {
    engine.reloadPlugins().catch((e) => console.error(`plugin reload failed, the current plugins stay: ${e instanceof Error ? e.message : String(e)}`));
  });
}

/** The engine as a stopping process closes it: running jobs get `COVEL_SHUTDOWN_GRACE_MS`, then are handed back. */
export const gracefulEngine = (engine: { config: { shutdown: { graceMs: number } }; close(options: { graceMs: number }): Promise<void> }): Closable => ({
  close: () => engine.close({ graceMs: engine.config.shutdown.graceMs }),
});
