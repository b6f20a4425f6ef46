import { EngineError } from '../../errors';
import type { RuntimeCatalog } from './runtime-catalog';

/** An execution captured a registry generation this process no longer (or never) had: that execution fails, the worker goes on. */
export class PluginGenerationUnavailableError extends EngineError {
  readonly code = 'PLUGIN_GENERATION_UNAVAILABLE';
  readonly category = 'not-found';
  constructor(
    readonly executionId: string,
    readonly generation: string,
  ) {
    super(
      `execution ${executionId} started with plugin registry generation ${generation}, which this process does not hold (reloaded too often, or started by a process with other plugin files)`,
    );
  }
}

/** How many registry generations a process keeps (the current one included) for executions that captured them. */
export const DEFAULT_GENERATIONS_KEPT = 8;

/**
 * The plugin catalogs a process holds: the current one (new executions capture it) and the most
 * recent earlier ones, so an execution that started before a reload finishes with the plugins it
 * started with. A bounded number is kept (`keep`); an execution whose generation is gone fails
 * with `PluginGenerationUnavailableError`.
 */
export class CatalogGenerations {
  private readonly byId = new Map<string, RuntimeCatalog>();
  private currentCatalog: RuntimeCatalog;

  constructor(
    initial: RuntimeCatalog,
    private readonly keep: number = DEFAULT_GENERATIONS_KEPT,
  ) {
    this.currentCatalog = initial;
    this.byId.set(initial.generation, initial);
  }

  get current(): RuntimeCatalog {
    return this.currentCatalog;
  }

  /** Makes `catalog` the current generation; false when its content equals the current one (nothing changes). */
  install(catalog: RuntimeCatalog): boolean {
    if (catalog.generation === this.currentCatalog.generation) return false;
    this.byId.delete(catalog.generation); // an id seen before moves to the newest place
    this.byId.set(catalog.generation, catalog);
    this.currentCatalog = catalog;
    while (this.byId.size > Math.max(1, this.keep)) this.byId.delete(this.byId.keys().next().value!);
    return true;
  }

  get(generation: string): RuntimeCatalog | undefined {
    return this.byId.get(generation);
  }

  /** Generation ids held, oldest first. */
  ids(): string[] {
    return [...this.byId.keys()];
  }
}

/**
 * The catalog an execution runs with: the generation its first `execution.started` captured, or
 * (an execution from a log older than generations, or not started yet) the current one.
 */
export function executionCatalog(
  source: { catalog: RuntimeCatalog; generations?: CatalogGenerations },
  execution: { executionId: string; generation?: string } | undefined,
): RuntimeCatalog {
  const generation = execution?.generation;
  if (generation === undefined || generation === source.catalog.generation) return source.catalog;
  const catalog = source.generations?.get(generation);
  if (!catalog) throw new PluginGenerationUnavailableError(execution!.executionId, generation);
  return catalog;
}
