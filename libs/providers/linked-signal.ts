/** A signal that follows others (`linkedSignal`), and the undo of its links. */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  /** Takes its listeners off the sources (idempotent): call it once the signal is no longer used. */
  release(): void;
}

/**
 * A signal aborted when the first of `sources` aborts, with that one's reason (already aborted if
 * one is), as `AbortSignal.any(sources)` is, through one `abort` listener on each source, which
 * `release` takes off. `AbortSignal.any` ties each source to the new signal with weak references
 * the garbage collector tracks: ~30-100 µs of CPU a signal in Node 20, and a model call made two
 * (the agent loop's, the slot deadlines'): about a tenth of the send's CPU (issue 33). A signal
 * not released stays linked for as long as its sources live (a source aborting later aborts it too).
 * Unlike `AbortSignal.any`, it aborts in its source's `abort` listeners, in the order they were added.
 */
export function linkedSignal(sources: readonly AbortSignal[]): LinkedSignal {
  const controller = new AbortController();
  const aborted = sources.find((s) => s.aborted);
  if (aborted) {
    controller.abort(aborted.reason);
    return { signal: controller.signal, release: () => undefined };
  }
  const release = () => {
    for (const s of sources) s.removeEventListener('abort', onAbort);
  };
  const onAbort = (event: Event) => {
    const source = event.target as AbortSignal;
    if (!source.aborted) return; // an 'abort' event dispatched by hand: no abort
    release();
    controller.abort(source.reason);
  };
  for (const s of sources) s.addEventListener('abort', onAbort);
  return { signal: controller.signal, release };
}
