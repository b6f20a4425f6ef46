/**
 * What must be undone if the bench stops early (an error, Ctrl-C, SIGTERM): each run registers how
 * to stop its processes and drop its database and queue keys, and unregisters once it has.
 */
export class Cleanups {
  private readonly pending = new Set<() => Promise<void>>();
  private stopping = false;
  private readonly interruption = new AbortController();

  /** Aborted when a signal arrives: the players stop posting. */
  get signal(): AbortSignal {
    return this.interruption.signal;
  }

  /** A signal arrived: what fails from now on is the cleanup's doing, not worth reporting. */
  get interrupted(): boolean {
    return this.stopping;
  }

  /** Registers `undo`; the returned function unregisters it. */
  add(undo: () => Promise<void>): () => void {
    this.pending.add(undo);
    return () => this.pending.delete(undo);
  }

  /** Runs everything still registered, newest first. */
  async runAll(): Promise<void> {
    for (const undo of [...this.pending].reverse()) {
      this.pending.delete(undo);
      await undo().catch((e) => console.error(`cleanup: ${String(e)}`));
    }
  }

  /** On SIGINT or SIGTERM: runs all, then exits 130 (a second signal exits at once). */
  onSignals(log: (line: string) => void): void {
    const stop = (signal: NodeJS.Signals) => {
      if (this.stopping) process.exit(130);
      this.stopping = true;
      this.interruption.abort();
      log(`\n${signal}: stopping the processes, dropping the database and the queue keys...`);
      void this.runAll().finally(() => process.exit(130));
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  }
}
