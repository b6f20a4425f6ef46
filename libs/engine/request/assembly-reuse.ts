import { type AssembledContext, type BuildContextParams, buildContext } from '../../context';
import { BoundedMemo } from '../../memo';
import { sameData } from './same-data';

/**
 * The latest assembly (`buildContext`) of each session's runtime in this process, given again to a
 * later build of that runtime whose params are the same data (`sameData`): buildContext is pure, so
 * the same params give the same context. A turn builds its first agent's request twice (the
 * compaction barrier's estimate, then the step's, with its budget), and an agent loop once per step,
 * from the same assembly (issue 33: CPU per turn). Only an assembly no plugin code is given
 * (`RuntimeRequestInputs` without PostContextAssembly hooks) is kept: none can have changed it.
 */
export class AssemblyReuse {
  private readonly kept: BoundedMemo<string, { params: BuildContextParams; context: AssembledContext }>;
  /** Assemblies given again, and built (tests, benches). */
  readonly counts = { reused: 0, built: 0 };

  constructor(options: { maxEntries: number; ttlMs: number; now?: () => number }) {
    this.kept = new BoundedMemo(options);
  }

  /** `buildContext(params)`, or the context built for `key` from the same params. */
  async assemble(key: string, params: BuildContextParams): Promise<AssembledContext> {
    const kept = this.kept.get(key);
    if (kept && sameData(kept.params, params)) {
      this.counts.reused++;
      return kept.context;
    }
    const context = await buildContext(params);
    this.counts.built++;
    this.kept.set(key, { params, context });
    return context;
  }
}

/**
 * The worker's: a session's runtime is kept 60 s after its last build (a turn's steps, a loop's),
 * at most 256 of them (the oldest built first forgotten).
 */
export const workerAssemblies = new AssemblyReuse({ maxEntries: 256, ttlMs: 60_000 });
