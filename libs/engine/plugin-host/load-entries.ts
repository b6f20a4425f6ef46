import { pathToFileURL } from 'node:url';
import type { LoadedPlugin } from '../../plugins-sdk';
import type { PluginSdk, RegisterFn } from '../../plugins-sdk';
import { PluginEntryError } from '../errors';
import { ExtensionRegistry } from './registry';
import { pluginSdkFor } from './plugin-scope';

/** Native `import()` (a TypeScript `import()` compiled to CommonJS would become `require`). */
const nativeImport = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<Record<string, unknown>>;

/**
 * Loads an entry module: `require` first (CommonJS, and TypeScript through the process's
 * register hook or Jest's transform), the native `import()` for an ES module `require` refuses.
 */
async function importEntry(path: string): Promise<Record<string, unknown>> {
  try {
    // the module's own `require`: Jest's (with its transform) under Jest, Node's (with the register hook) otherwise
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(path) as Record<string, unknown>;
  } catch (error) {
    if ((error as { code?: string }).code !== 'ERR_REQUIRE_ESM') throw error;
    return nativeImport(pathToFileURL(path).href);
  }
}

function registerOf(mod: Record<string, unknown>): RegisterFn | null {
  if (typeof mod.register === 'function') return mod.register as RegisterFn;
  const fallback = mod.default as Record<string, unknown> | undefined;
  return typeof fallback?.register === 'function' ? (fallback.register as RegisterFn) : null;
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Start-up: loads every plugin's server entry and calls its `register(api)` once, in plugin id
 * order. An entry that does not load, has no `register`, throws, or registers extensions other
 * than its `contributes.extensions` (either way) stops start-up with an error naming the plugin.
 */
export async function loadPluginEntries(plugins: readonly LoadedPlugin[], sdk: PluginSdk): Promise<ExtensionRegistry> {
  const registry = new ExtensionRegistry();
  for (const plugin of plugins) {
    const pluginId = plugin.manifest.id;
    const declared = plugin.manifest.contributes.extensions;
    if (plugin.entry === null) {
      if (declared.length > 0) throw new PluginEntryError(pluginId, `declares extension ${declared[0].point} "${declared[0].id}" but has no server entry`);
      const fn = plugin.runtimes.find((r) => r.manifest.type === 'function');
      if (fn)
        throw new PluginEntryError(pluginId, `runtime ${fn.id} is a function runtime but the plugin has no server entry to register it with api.runFunction`);
      const tool = plugin.manifest.contributes.tools[0];
      if (tool)
        throw new PluginEntryError(pluginId, `declares tool "${tool.name}" in contributes.tools but has no server entry to register it with api.registerTool`);
      continue;
    }
    let mod: Record<string, unknown>;
    try {
      mod = await importEntry(plugin.entry);
    } catch (error) {
      throw new PluginEntryError(pluginId, `server entry ${plugin.entry} does not load: ${message(error)}`, { cause: error });
    }
    const register = registerOf(mod);
    if (!register) throw new PluginEntryError(pluginId, `server entry ${plugin.entry} exports no register(api) function`);
    try {
      await register(registry.apiFor(pluginId, pluginSdkFor(plugin, sdk)));
    } catch (error) {
      if (error instanceof PluginEntryError) throw error;
      throw new PluginEntryError(pluginId, `register(api) threw: ${message(error)}`, { cause: error });
    }
    checkDeclared(plugin, registry);
  }
  return registry;
}

/** `contributes.extensions` and what `register` registered must be the same set. */
function checkDeclared(plugin: LoadedPlugin, registry: ExtensionRegistry) {
  const pluginId = plugin.manifest.id;
  const key = (e: { point: string; id: string }) => `${e.point} "${e.id}"`;
  const declared = new Set(plugin.manifest.contributes.extensions.map(key));
  const registered = new Set(registry.extensionsOf(pluginId).map(key));
  const undeclared = [...registered].filter((k) => !declared.has(k));
  const missing = [...declared].filter((k) => !registered.has(k));
  if (undeclared.length > 0) throw new PluginEntryError(pluginId, `registers extension ${undeclared.join(', ')} not declared in contributes.extensions`);
  if (missing.length > 0)
    throw new PluginEntryError(pluginId, `declares extension ${missing.join(', ')} in contributes.extensions but register(api) does not provide it`);
  checkTools(plugin, registry);
  const runtimes = new Set(plugin.runtimes.map((r) => r.id));
  for (const r of plugin.runtimes)
    if (r.manifest.type === 'function' && !registry.functions.has(`${pluginId}/${r.id}`))
      throw new PluginEntryError(pluginId, `runtime ${r.id} is a function runtime but register(api) does not call api.runFunction("${r.id}", fn)`);
  for (const [key, f] of registry.functions) {
    const runtimeId = key.slice(pluginId.length + 1);
    if (f.pluginId === pluginId && !runtimes.has(runtimeId))
      throw new PluginEntryError(pluginId, `runFunction("${runtimeId}"): the plugin has no such runtime`);
    if (f.pluginId === pluginId && plugin.runtimes.find((r) => r.id === runtimeId)?.manifest.type !== 'function')
      throw new PluginEntryError(
        pluginId,
        `runFunction("${runtimeId}"): runtime ${runtimeId} is an agent runtime (only type: function runtimes run a function)`,
      );
  }
}

/** `contributes.tools` and the tools `register` registered with `api.registerTool` must be the same names. */
function checkTools(plugin: LoadedPlugin, registry: ExtensionRegistry) {
  const pluginId = plugin.manifest.id;
  const declared = new Set(plugin.manifest.contributes.tools.map((t) => t.name));
  for (const [name, t] of registry.tools)
    if (t.pluginId === pluginId && !declared.has(name))
      throw new PluginEntryError(pluginId, `registerTool("${name}"): the tool is not declared in contributes.tools (its description and parameters)`);
  for (const name of declared)
    if (registry.tools.get(name)?.pluginId !== pluginId)
      throw new PluginEntryError(pluginId, `declares tool "${name}" in contributes.tools but register(api) does not call api.registerTool("${name}", fn)`);
}
