import { UnknownStageError } from '../errors';
import { catalogGeneration } from './generation-id';
import { PluginHost } from '../plugin-host/host';
import { FRAMEWORK_TOOLS } from './framework-tools';
import { type LoadedPlugin, type Locale, PluginManifestError, type RuntimeExportDeclaration, type RuntimeManifest } from '../../plugins-sdk';
import { matchesAudience } from '../../context';

/** A runtime of the catalog: one plugin's inline or child runtime. */
export interface CatalogRuntime {
  pluginId: string;
  /** The runtime's own id (events carry it as `runtimeId`). */
  runtimeId: string;
  /** `<plugin-id>/<runtime-id>`. */
  fullId: string;
  /** `schedule.stage`, or null: the runtime runs after all stages. */
  stage: string | null;
  manifest: RuntimeManifest;
  /** The runtime's body per locale (PLUGIN.md's for the inline runtime, RUNTIME.md's for a child). */
  bodies: Record<Locale, string>;
  /** The file that declares it. */
  file: string;
  /** Declared inline (`runtime:` in PLUGIN.md) rather than in runtimes/<id>/RUNTIME.md. */
  inline: boolean;
  plugin: LoadedPlugin;
}

/** One `io.exports` entry that reaches a runtime: the exporting runtime, the name and its declaration. */
export interface ReachingExport {
  producer: CatalogRuntime;
  name: string;
  declaration: RuntimeExportDeclaration;
}

/** Stage order of a turn; runtimes with no stage run after all of them (spec §1). */
export const DEFAULT_STAGES = ['pre-turn', 'narrative', 'post-turn'] as const;

/**
 * Every runtime of the loaded plugins. Only runtimes with `schedule.trigger: auto` run in every
 * turn (`groups()`); event-triggered (`{ event }`) and `manual` runtimes are in the catalog
 * (`all()`, `find()`) but are not run by a turn until their activation is wired.
 *
 * Checks across plugins, at start-up: a stage is one of the turn's stages; an event trigger names
 * a topic some loaded plugin declares in `contributes.events`; an `io.inputs` binding
 * `from: { runtime }` names a runtime of the catalog in an earlier stage; every name in
 * `agent.tools` is a framework tool or a tool some loaded plugin declares in `contributes.tools`;
 * the `io.exports` that reach one agent runtime have distinct names.
 */
export class RuntimeCatalog {
  private readonly runtimes: readonly CatalogRuntime[];
  /** `groups()`, once asked. */
  private autoGroups: readonly RuntimeGroup[] | undefined;
  /** The registry generation: a content hash of manifests, bodies and static segments (recorded by `execution.started`). */
  readonly generation: string;

  constructor(
    readonly plugins: readonly LoadedPlugin[],
    readonly stages: readonly string[] = DEFAULT_STAGES,
    /** The plugins' server entries (loaded at start-up with `PluginHost.load`); none by default. */
    readonly host: PluginHost = PluginHost.none(),
    /** A session's view of a catalog keeps the catalog's generation (`forSession`). */
    options: { generation?: string } = {},
  ) {
    this.runtimes = plugins.flatMap((plugin) =>
      plugin.runtimes.map((r) => ({
        pluginId: plugin.manifest.id,
        runtimeId: r.id,
        fullId: r.fullId,
        stage: r.manifest.schedule.stage ?? null,
        manifest: r.manifest,
        bodies: r.bodies,
        file: r.file,
        inline: r.inline,
        plugin,
      })),
    );
    for (const r of this.runtimes) {
      if (r.stage !== null && !stages.includes(r.stage)) throw new UnknownStageError(r.pluginId, r.runtimeId, r.stage);
    }
    this.checkTriggers();
    this.checkInputs();
    this.checkConditions();
    this.checkTools();
    this.checkExports();
    this.generation = options.generation ?? catalogGeneration(plugins);
  }

  private readonly sessionViews = new Map<string, RuntimeCatalog>();
  /** `forSession`'s answers by the list given (the same array: the same view), and for no list. */
  private readonly viewsByList = new WeakMap<readonly string[], RuntimeCatalog>();
  private defaultView: RuntimeCatalog | undefined;

  /** Ids of the plugins a session runs when neither its world nor its creation names them. */
  defaultPluginIds(): string[] {
    return this.plugins.filter((p) => p.manifest.enabledByDefault).map((p) => p.manifest.id);
  }

  /**
   * The catalog a session runs with: only its plugins (`session.created@1` `plugins`), or, without
   * a list, the plugins enabled by default. Plugin ids no longer loaded are left out. The view
   * keeps this catalog's generation; it is made once per list. A list whose plugins do not hold
   * together (an input from a runtime left out, a tool no plugin of the list declares) throws the
   * manifest error that names it.
   */
  forSession(pluginIds: readonly string[] | null | undefined): RuntimeCatalog {
    // a session's list is one array for as long as its settings are kept (`readSessionCreated`), and
    // every turn asks several times (its step, its barrier, its runtimes): answered by the array
    const known = pluginIds ? this.viewsByList.get(pluginIds) : this.defaultView;
    if (known) return known;
    const view = this.viewFor(pluginIds);
    if (pluginIds) this.viewsByList.set(pluginIds, view);
    else this.defaultView = view;
    return view;
  }

  /** `forSession`'s view of a list, made once per set of plugin ids. */
  private viewFor(pluginIds: readonly string[] | null | undefined): RuntimeCatalog {
    const loaded = new Set(this.plugins.map((p) => p.manifest.id));
    const ids = new Set((pluginIds ?? this.defaultPluginIds()).filter((id) => loaded.has(id)));
    if (ids.size === loaded.size) return this;
    const key = [...ids].sort().join(',');
    let view = this.sessionViews.get(key);
    if (!view) {
      view = new RuntimeCatalog(
        this.plugins.filter((p) => ids.has(p.manifest.id)),
        this.stages,
        this.host.only(ids),
        { generation: this.generation },
      );
      this.sessionViews.set(key, view);
    }
    return view;
  }

  private checkTriggers(): void {
    const topics = new Set(this.plugins.flatMap((p) => p.manifest.contributes.events.map((e) => e.topic)));
    for (const r of this.runtimes) {
      const trigger = r.manifest.schedule.trigger;
      if (typeof trigger === 'object' && !topics.has(trigger.event)) {
        throw new PluginManifestError(r.file, [
          {
            path: `${this.pathPrefix(r)}schedule.trigger.event`,
            message: `plugin ${r.pluginId}: runtime ${r.runtimeId} is triggered by "${trigger.event}", a topic no loaded plugin declares in contributes.events`,
          },
        ]);
      }
    }
  }

  /** A runtime's `agent.tools` names only tools that exist: the framework's, or some loaded plugin's `contributes.tools`. */
  private checkTools(): void {
    const known = [...FRAMEWORK_TOOLS, ...this.plugins.flatMap((p) => p.manifest.contributes.tools.map((t) => t.name))];
    for (const r of this.runtimes) {
      const unknown = (r.manifest.agent?.tools ?? []).flatMap((name, i) => (known.includes(name) ? [] : [{ name, i }]));
      if (unknown.length === 0) continue;
      throw new PluginManifestError(
        r.file,
        unknown.map(({ name, i }) => ({
          path: `${this.pathPrefix(r)}agent.tools.${i}`,
          message: `plugin ${r.pluginId}: runtime ${r.runtimeId} declares tool "${name}", which is neither a framework tool nor a tool any loaded plugin declares in contributes.tools (known tools: ${[...new Set(known)].join(', ')})`,
        })),
      );
    }
  }

  private checkInputs(): void {
    for (const r of this.runtimes) {
      for (const [binding, input] of Object.entries(r.manifest.io.inputs)) {
        if (!('runtime' in input.from)) {
          this.checkContractInput(r, binding, input.from.contract);
          continue;
        }
        const path = `${this.pathPrefix(r)}io.inputs.${binding}.from.runtime`;
        const source = this.runtimes.find((s) => s.fullId === (input.from as { runtime: string }).runtime);
        if (!source) {
          throw new PluginManifestError(r.file, [
            { path, message: `plugin ${r.pluginId}: runtime ${r.runtimeId} reads "${input.from.runtime}", which is not a runtime of the loaded plugins` },
          ]);
        }
        if (!this.isEarlier(source, r)) {
          throw new PluginManifestError(r.file, [
            {
              path,
              message: `plugin ${r.pluginId}: runtime ${r.runtimeId} (stage ${r.stage ?? '(none: after all stages)'}) reads "${source.fullId}" (stage ${source.stage ?? '(none: after all stages)'}), which is not in an earlier stage`,
            },
          ]);
        }
      }
    }
  }

  /**
   * The `io.exports` entries whose audience (`to`) takes in `consumer` (spec §2 `<runtime-exports>`),
   * in a fixed order whatever the plugins' load order: by plugin id, runtime id, then as declared.
   */
  exportsTo(consumer: CatalogRuntime): ReachingExport[] {
    const view = { pluginId: consumer.pluginId, outputKind: consumer.manifest.outputKind, contract: consumer.manifest.output.contract };
    return [...this.runtimes]
      .sort((a, b) => compareIds(a.pluginId, b.pluginId) || compareIds(a.runtimeId, b.runtimeId))
      .flatMap((producer) =>
        Object.entries(producer.manifest.io.exports)
          .filter(([, declaration]) => matchesAudience({ audience: declaration.to, providerPluginId: producer.pluginId }, view))
          .map(([name, declaration]) => ({ producer, name, declaration })),
      );
  }

  /** The exports an agent runtime sees are one JSON object keyed by name: two of one name would hide one. */
  private checkExports(): void {
    for (const consumer of this.runtimes.filter((r) => r.manifest.type === 'agent')) {
      const seen = new Map<string, CatalogRuntime>();
      for (const { producer, name } of this.exportsTo(consumer)) {
        const first = seen.get(name);
        if (first)
          throw new PluginManifestError(producer.file, [
            {
              path: `${this.pathPrefix(producer)}io.exports.${name}`,
              message: `plugin ${producer.pluginId}: runtime ${producer.runtimeId} exports "${name}" to ${consumer.fullId}, which already sees an export of that name from ${first.fullId} (the names a runtime sees in <runtime-exports> are distinct)`,
            },
          ]);
        seen.set(name, producer);
      }
    }
  }

  /** A `schedule.when` names a runtime of the catalog in an earlier stage (its output decides whether this one runs). */
  private checkConditions(): void {
    for (const r of this.runtimes) {
      const when = r.manifest.schedule.when;
      if (!when) continue;
      const path = `${this.pathPrefix(r)}schedule.when.runtime`;
      const source = this.runtimes.find((s) => s.fullId === when.runtime);
      if (!source) {
        throw new PluginManifestError(r.file, [
          { path, message: `plugin ${r.pluginId}: runtime ${r.runtimeId} runs when "${when.runtime}" says so, which is not a runtime of the loaded plugins` },
        ]);
      }
      if (!this.isEarlier(source, r)) {
        throw new PluginManifestError(r.file, [
          {
            path,
            message: `plugin ${r.pluginId}: runtime ${r.runtimeId} (stage ${r.stage ?? '(none: after all stages)'}) runs when "${source.fullId}" (stage ${source.stage ?? '(none: after all stages)'}) says so, which is not in an earlier stage`,
          },
        ]);
      }
    }
  }

  /** A `from: { contract }` binding needs a runtime of an earlier stage that declares the contract (`output.contract`). */
  private checkContractInput(r: CatalogRuntime, binding: string, contract: string): void {
    if (this.runtimes.some((s) => s.manifest.output.contract === contract && this.isEarlier(s, r))) return;
    throw new PluginManifestError(r.file, [
      {
        path: `${this.pathPrefix(r)}io.inputs.${binding}.from.contract`,
        message: `plugin ${r.pluginId}: runtime ${r.runtimeId} reads contract "${contract}", which no runtime of an earlier stage declares in output.contract`,
      },
    ]);
  }

  /** Whether `a` runs in a stage before `b`'s (a runtime with no stage runs after all stages). */
  isEarlier(a: CatalogRuntime, b: CatalogRuntime): boolean {
    const ai = this.stageIndex(a);
    const bi = this.stageIndex(b);
    if (ai === null) return false;
    return bi === null || ai < bi;
  }

  private pathPrefix(r: CatalogRuntime): string {
    return r.inline ? 'runtime.' : '';
  }

  /** Position of the runtime's stage in the turn; null for a runtime with no stage. */
  stageIndex(runtime: CatalogRuntime): number | null {
    return runtime.stage === null ? null : this.stages.indexOf(runtime.stage);
  }

  /** Every runtime, whatever its trigger, in plugin order (the inline runtime first, then children by id). */
  all(): CatalogRuntime[] {
    return [...this.runtimes];
  }

  /** The runtime with this plugin and runtime id, if the catalog has it. */
  find(pluginId: string, runtimeId: string): CatalogRuntime | undefined {
    return this.runtimes.find((r) => r.pluginId === pluginId && r.runtimeId === runtimeId);
  }

  /**
   * Groups a turn runs one after another (a barrier between groups; runtimes of a group in
   * parallel): the `trigger: auto` runtimes only — event-triggered and manual runtimes do not run
   * as part of a turn's stages.
   */
  groups(): readonly RuntimeGroup[] {
    // the catalog never changes: made once (a turn step, the barrier and the commit each ask, every turn: issue 33)
    this.autoGroups ??= Object.freeze(autoGroups(this.runtimes, this.stages));
    return this.autoGroups;
  }
}

/** One group of `RuntimeCatalog.groups`: a stage (null: the runtimes with none) and its `trigger: auto` runtimes. */
export interface RuntimeGroup {
  readonly stage: string | null;
  readonly runtimes: readonly CatalogRuntime[];
}

function autoGroups(runtimes: readonly CatalogRuntime[], stages: readonly string[]): RuntimeGroup[] {
  const auto = runtimes.filter((r) => r.manifest.schedule.trigger === 'auto');
  const groups: RuntimeGroup[] = stages.map((stage) => Object.freeze({ stage, runtimes: Object.freeze(auto.filter((r) => r.stage === stage)) }));
  groups.push(Object.freeze({ stage: null, runtimes: Object.freeze(auto.filter((r) => r.stage === null)) }));
  return groups.filter((g) => g.runtimes.length > 0);
}

const compareIds = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
