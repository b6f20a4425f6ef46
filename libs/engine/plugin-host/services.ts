import { type HandlerContext, SERVICE_POINTS, type ServicePoint, type ServiceResult } from '../../plugins-sdk';
import type { ExtensionRegistry, RegisteredExtension } from './registry';

/** Resolves one provider of a service for `{}`: its validated result (recorded and reused where the caller records). */
export type ServiceRun = (entry: RegisteredExtension, input: Record<string, never>) => Promise<unknown>;

/** Why `ctx.services` is refused. */
export class ServiceCallError extends Error {
  constructor(pluginId: string, detail: string) {
    super(`plugin ${pluginId}: ctx.services: ${detail}`);
    this.name = 'ServiceCallError';
  }
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export const isServicePoint = (point: string): point is ServicePoint => (SERVICE_POINTS as readonly string[]).includes(point);

/**
 * `ctx.services(point)`: every provider of a service point, in plugin id order (then extension id), each resolved through `run` with the input `{}`, answered with the host-set
 * `providerPluginId`. `run: null` refuses the call (inside a service provider: no nesting, so no
 * cycle), naming the reason.
 */
export function serviceReader(args: {
  pluginId: string;
  registry: ExtensionRegistry | null;
  run: ServiceRun | null;
  refusal?: string;
}): HandlerContext['services'] {
  const { pluginId, registry, run } = args;
  const services = async <P extends ServicePoint>(point: P): Promise<readonly ServiceResult<P>[]> => {
    if (!isServicePoint(point)) throw new ServiceCallError(pluginId, `"${String(point)}" is not a service point (${SERVICE_POINTS.join(', ')})`);
    if (!run || !registry) throw new ServiceCallError(pluginId, args.refusal ?? 'not available here');
    const out: ServiceResult<P>[] = [];
    // plugin id order (then extension id) whatever order the plugins were loaded in
    const providers = [...registry.providers(point)].sort((a, b) => compare(a.pluginId, b.pluginId) || compare(a.id, b.id));
    for (const provider of providers) {
      const result = (await run(provider, {})) as ServiceResult<P>['result'];
      out.push(Object.freeze({ providerPluginId: provider.pluginId, id: provider.id, result: structuredClone(result) }));
    }
    return Object.freeze(out);
  };
  return services;
}
