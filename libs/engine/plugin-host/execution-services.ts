import type { HandlerContext } from '../../plugins-sdk';
import type { ExecutionScope, PluginDataSource } from './handler-context';
import type { Invoke } from './invoke';
import type { ExtensionRegistry } from './registry';
import { LiveResolver } from './resolver';
import { serviceReader } from './services';

/**
 * `ctx.services` of a tool or a function runtime: results this execution recorded already are
 * reused (what its requests showed), other providers run here; not recorded on their own (the
 * tool's outcome or the function's output is).
 */
export function executionServices(args: {
  pluginId: string;
  host: { registry: ExtensionRegistry; invoker(scope: ExecutionScope, pluginData: PluginDataSource): Invoke };
  scope: ExecutionScope;
  pluginData: PluginDataSource;
  recorded: ReadonlyMap<string, string>;
}): HandlerContext['services'] {
  const resolver = new LiveResolver(args.recorded, args.host.invoker(args.scope, args.pluginData));
  return serviceReader({ pluginId: args.pluginId, registry: args.host.registry, run: (provider, input) => resolver.resolve(provider, input) });
}
