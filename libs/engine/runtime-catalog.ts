import { UnknownStageError } from './errors';
import type { LoadedPlugin, Locale, RuntimeManifest } from '../plugins-sdk';
import { PluginHost } from './plugin-host/host';

export interface CatalogRuntime {
  pluginId: string;
  manifest: RuntimeManifest;
  bodies: Record<Locale, string>;
}

/** Stage order of a turn; runtimes with no stage run after all of them (spec §1). */
export const DEFAULT_STAGES = ['pre-turn', 'narrative', 'post-turn'] as const;

export class RuntimeCatalog {
  constructor(
    readonly plugins: readonly LoadedPlugin[],
    readonly stages: readonly string[] = DEFAULT_STAGES,
    /** The plugins' server entries (loaded at start-up with `PluginHost.load`); none by default. */
    readonly host: PluginHost = PluginHost.none(),
  ) {
    for (const r of this.all()) {
      if (r.manifest.stage !== null && !stages.includes(r.manifest.stage)) {
        throw new UnknownStageError(r.pluginId, r.manifest.id, r.manifest.stage);
      }
    }
  }

  /** Position of the runtime's stage in the turn; null for a runtime with no stage. */
  stageIndex(runtime: CatalogRuntime): number | null {
    return runtime.manifest.stage === null ? null : this.stages.indexOf(runtime.manifest.stage);
  }

  all(): CatalogRuntime[] {
    return this.plugins.flatMap((p) => p.manifest.runtimes.map((manifest) => ({ pluginId: p.manifest.id, manifest, bodies: p.bodies })));
  }

  /** The runtime with this plugin and runtime id, if the catalog has it. */
  find(pluginId: string, runtimeId: string): CatalogRuntime | undefined {
    return this.all().find((r) => r.pluginId === pluginId && r.manifest.id === runtimeId);
  }

  /** Groups to run one after another (a barrier between groups; runtimes of a group in parallel). */
  groups(): { stage: string | null; runtimes: CatalogRuntime[] }[] {
    const all = this.all();
    const groups: { stage: string | null; runtimes: CatalogRuntime[] }[] = this.stages.map((stage) => ({
      stage,
      runtimes: all.filter((r) => r.manifest.stage === stage),
    }));
    groups.push({ stage: null, runtimes: all.filter((r) => r.manifest.stage === null) });
    return groups.filter((g) => g.runtimes.length > 0);
  }
}
