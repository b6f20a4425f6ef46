/** Runs a process entry point: an error is printed as one line and exits 1. */
export function runMain(main: () => Promise<void>): void {
  main().catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}

/** On SIGTERM or SIGINT, closes each in order (once), then exits 0. */
export function closeOnSignals(...closables: { close(): Promise<unknown> }[]): void {
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    for (const c of closables) await c.close().catch((e) => console.error(`while stopping: ${String(e)}`));
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
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
