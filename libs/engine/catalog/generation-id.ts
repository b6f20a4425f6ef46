import { createHash } from 'node:crypto';
import type { LoadedPlugin } from '../../plugins-sdk';

/**
 * A registry generation's id (spec §6: "the manifests of running plugins, their localized bodies,
 * and their static extension segments follow the registry generation that was captured"): a
 * content hash of every plugin's manifest, root bodies, static segments and runtimes (manifests and
 * bodies), in load order. The same files give the same id in every process.
 */
export function catalogGeneration(plugins: readonly LoadedPlugin[]): string {
  const content = plugins.map((p) => ({
    manifest: p.manifest,
    bodies: p.bodies,
    staticSegments: p.staticSegments,
    runtimes: p.runtimes.map((r) => ({ id: r.fullId, manifest: r.manifest, bodies: r.bodies })),
  }));
  return `g-${createHash('sha256').update(JSON.stringify(content)).digest('hex').slice(0, 24)}`;
}
