import type { LoadedPlugin } from '../../plugins-sdk';
import { emptyPluginData, type ExecutionScope, type PluginDataSource, pluginSdk } from './handler-context';
import { type BlockingReporter, type BlockingWatch, executionInvoker, type Invoke, watchFor } from './invoke';
import { loadPluginEntries } from './load-entries';
import { ExtensionRegistry } from './registry';

/** Default time a handler or hook has to answer (`COVEL_PLUGIN_HANDLER_TIMEOUT_MS`). */
export const DEFAULT_HANDLER_TIMEOUT_MS = 5_000;

/** Default synchronous time of a handler past which a warning names its plugin (`COVEL_PLUGIN_BLOCKING_WARN_MS`). */
export const DEFAULT_BLOCKING_WARN_MS = 200;

export interface PluginHostOptions {
  handlerTimeoutMs?: number;
  /**
   * Handlers' code runs on the process's event loop: a synchronous part longer than `thresholdMs`
   * stalls everything else in it (the HTTP API of `npm start`) and is reported (a warning naming the plugin).
   */
  blocking?: { thresholdMs: number; report: BlockingReporter } | null;
  /** `ctx.pluginData`; default: every namespace empty (until the plugin data store is wired). */
  pluginData?: PluginDataSource;
}

/** The plugins' code, loaded once at start-up: the registry and how handlers are run. */
export class PluginHost {
  readonly handlerTimeoutMs: number;
  readonly blocking: { thresholdMs: number; report: BlockingReporter } | null;
  readonly pluginData: PluginDataSource;
  /** The loaded plugins by id (`ctx.settings`, `ctx.sdk.pluginRoot`). */
  readonly plugins: ReadonlyMap<string, LoadedPlugin>;

  constructor(
    readonly registry: ExtensionRegistry,
    options: PluginHostOptions & { plugins?: readonly LoadedPlugin[] } = {},
  ) {
    this.handlerTimeoutMs = options.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS;
    this.blocking = options.blocking ?? null;
    this.pluginData = options.pluginData ?? emptyPluginData;
    this.plugins = new Map((options.plugins ?? []).map((p) => [p.manifest.id, p]));
  }

  /** Loads every plugin's server entry and calls its `register(api)` (start-up errors name the plugin). */
  static async load(plugins: readonly LoadedPlugin[], options: PluginHostOptions = {}): Promise<PluginHost> {
    return new PluginHost(await loadPluginEntries(plugins, pluginSdk), { ...options, plugins });
  }

  /** The same host with only these plugins' registrations and plugins (a session's plugins). */
  only(pluginIds: ReadonlySet<string>): PluginHost {
    return new PluginHost(this.registry.only(pluginIds), {
      handlerTimeoutMs: this.handlerTimeoutMs,
      blocking: this.blocking,
      pluginData: this.pluginData,
      plugins: [...this.plugins.values()].filter((p) => pluginIds.has(p.manifest.id)),
    });
  }

  /** No plugin code (plugins without entries, or tests of the static parts). */
  static none(): PluginHost {
    return new PluginHost(new ExtensionRegistry());
  }

  /** Runs handlers for one execution (its locale, session, world); `pluginData`: where `ctx.pluginData` reads (default: the host's). */
  invoker(scope: ExecutionScope, pluginData: PluginDataSource = this.pluginData): Invoke {
    return executionInvoker(scope, { timeoutMs: this.handlerTimeoutMs, pluginData, plugins: this.plugins, registry: this.registry, blocking: this.blocking });
  }

  /** The blocking watch of one handler of a plugin (a function runtime, a tool), for `within`. */
  blockingWatch(handler: { pluginId: string; point: string; handlerId: string }): BlockingWatch | null {
    return watchFor(this.blocking, handler);
  }
}
