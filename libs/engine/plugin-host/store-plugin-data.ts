import type { PluginDataStore } from '../../events';
import { PluginDataRefusedError } from './plugin-data-errors';
import type { PluginDataSource } from './handler-context';

const readOnly = (pluginId: string, call: string) => async () => {
  throw new PluginDataRefusedError(pluginId, `${call}: read-only here; plugin data is written only by function runtimes (and tools)`);
};

/**
 * `ctx.pluginData` of handlers and hooks backed by the plugin data store: reads only (`get`, `list`),
 * scoped to the tenant, the session and the handler's own plugin. `get` of a key that is not there
 * resolves to null; `set` and `delete` throw (writes belong to function runtimes). A handler's result is recorded (`extension.resolved@1`), so replay never reads
 * the store for it.
 */
export function storePluginData(store: Pick<PluginDataStore, 'scope'>): PluginDataSource {
  return {
    reader(scope) {
      const data = store.scope(scope);
      return Object.freeze({
        get: async (namespace: string, key: string) => (await data.get(namespace, key)) ?? null,
        list: (namespace: string, options?: { limit?: number }) => data.list(namespace, options),
        set: readOnly(scope.pluginId, 'set'),
        delete: readOnly(scope.pluginId, 'delete'),
      });
    },
  };
}
