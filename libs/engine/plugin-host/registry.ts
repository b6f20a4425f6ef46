import {
  EXTENSION_POINTS,
  type ExtensionPoint,
  type FunctionRuntimeFn,
  type HandlerContext,
  HOOK_NAMES,
  type HookContext,
  type HookName,
  type PluginApi,
  type PluginSdk,
  SINGLE_PROVIDER_POINTS,
  type ToolFn,
} from '../../plugins-sdk';
import { PluginEntryError } from '../errors';

export interface RegisteredExtension {
  point: ExtensionPoint;
  pluginId: string;
  id: string;
  handler: (input: never, ctx: HandlerContext) => unknown;
}

export interface RegisteredHook {
  name: HookName;
  pluginId: string;
  /** `<name>#<n>`: the n-th hook of this name the plugin registered (stable across start-ups). */
  id: string;
  fn: (payload: never, ctx: HookContext) => unknown;
  /** `hook(name, fn, { runtimes: 'own' })`: asked only about this plugin's own runtimes' requests. */
  ownRuntimesOnly?: true;
}

/**
 * What every plugin's `register(api)` registered, in plugin id order (the order providers run in).
 * Built once at start-up; read-only afterwards.
 */
export class ExtensionRegistry {
  private readonly extensions: RegisteredExtension[] = [];
  private readonly hooks: RegisteredHook[] = [];
  readonly functions = new Map<string, { pluginId: string; fn: FunctionRuntimeFn }>();
  readonly tools = new Map<string, { pluginId: string; fn: ToolFn }>();

  providers(point: ExtensionPoint): readonly RegisteredExtension[] {
    return this.extensions.filter((e) => e.point === point);
  }

  /** The hooks of a name in the order they run; with `runtime`, those asked about that runtime's requests. */
  hooksOf(name: HookName, runtime?: { pluginId: string }): readonly RegisteredHook[] {
    return this.hooks.filter((h) => h.name === name && (runtime === undefined || !h.ownRuntimesOnly || h.pluginId === runtime.pluginId));
  }

  /** What these plugins registered, nothing of the others (a session's plugins: `RuntimeCatalog.forSession`). */
  only(pluginIds: ReadonlySet<string>): ExtensionRegistry {
    const view = new ExtensionRegistry();
    view.extensions.push(...this.extensions.filter((e) => pluginIds.has(e.pluginId)));
    view.hooks.push(...this.hooks.filter((h) => pluginIds.has(h.pluginId)));
    for (const [key, f] of this.functions) if (pluginIds.has(f.pluginId)) view.functions.set(key, f);
    for (const [name, t] of this.tools) if (pluginIds.has(t.pluginId)) view.tools.set(name, t);
    return view;
  }

  /** Everything `pluginId` registered with `provideExtension`. */
  extensionsOf(pluginId: string): readonly RegisteredExtension[] {
    return this.extensions.filter((e) => e.pluginId === pluginId);
  }

  /** The `api` one plugin's `register` is given; every call is checked and recorded here. */
  apiFor(pluginId: string, sdk: PluginSdk): PluginApi {
    const extensions = this.extensions;
    const hooks = this.hooks;
    const functions = this.functions;
    const tools = this.tools;
    const fail = (detail: string) => new PluginEntryError(pluginId, detail);
    const api: PluginApi = {
      pluginId,
      sdk,
      provideExtension(point, id, provider) {
        if (!(EXTENSION_POINTS as readonly string[]).includes(point)) throw fail(`provideExtension: unknown extension point "${String(point)}"`);
        if (typeof id !== 'string' || id.length === 0) throw fail(`provideExtension(${point}): the id must be a non-empty string`);
        if (typeof provider?.handler !== 'function') throw fail(`provideExtension(${point}, "${id}"): no handler function`);
        if (extensions.some((e) => e.pluginId === pluginId && e.point === point && e.id === id))
          throw fail(`provideExtension(${point}, "${id}"): registered twice`);
        if (SINGLE_PROVIDER_POINTS.includes(point)) {
          const other = extensions.find((e) => e.point === point);
          if (other)
            throw fail(`${point} takes a single provider: plugin ${other.pluginId} provides "${other.id}" already, plugin ${pluginId} registers "${id}"`);
        }
        extensions.push({ point, pluginId, id, handler: provider.handler as unknown as RegisteredExtension['handler'] });
      },
      hook(name, fn, options) {
        if (!(HOOK_NAMES as readonly string[]).includes(name)) throw fail(`hook: unknown hook "${String(name)}"`);
        if (typeof fn !== 'function') throw fail(`hook(${name}): not a function`);
        const runtimes = options?.runtimes ?? 'all';
        if (runtimes !== 'all' && runtimes !== 'own') throw fail(`hook(${name}): runtimes must be "own" or "all", not ${JSON.stringify(runtimes)}`);
        const n = hooks.filter((h) => h.pluginId === pluginId && h.name === name).length;
        hooks.push({
          name,
          pluginId,
          id: `${name}#${n}`,
          fn: fn as unknown as RegisteredHook['fn'],
          ...(runtimes === 'own' ? { ownRuntimesOnly: true as const } : {}),
        });
      },
      runFunction(runtimeId, fn) {
        if (typeof fn !== 'function') throw fail(`runFunction(${runtimeId}): not a function`);
        const key = `${pluginId}/${runtimeId}`;
        if (functions.has(key)) throw fail(`runFunction(${runtimeId}): registered twice`);
        functions.set(key, { pluginId, fn });
      },
      registerTool(name, fn) {
        if (typeof fn !== 'function') throw fail(`registerTool(${name}): not a function`);
        const other = tools.get(name);
        if (other) throw fail(`registerTool(${name}): plugin ${other.pluginId} registered a tool of that name already`);
        tools.set(name, { pluginId, fn });
      },
    };
    return Object.freeze(api);
  }
}
