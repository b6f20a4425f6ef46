import type { ExtensionSegment } from '../../context';
import type { LoadedPlugin, Locale } from '../../plugins-sdk';

/**
 * Spec §3 "Fixed instructions": the host registers each plugin's `contributes.prompt` as segments
 * that apply to this plugin: they reach the declaring plugin's runtimes only (audience `self`).
 */
export function staticSegments(plugins: readonly LoadedPlugin[], locale: Locale): ExtensionSegment[] {
  return plugins.flatMap((plugin) =>
    plugin.staticSegments[locale].map((s) => ({
      id: s.id,
      providerPluginId: plugin.manifest.id, // set by the host: a plugin cannot claim another's segment
      content: s.content,
      position: s.position,
      role: s.role,
      volatility: s.volatility,
      order: s.order,
      audience: 'self' as const,
    })),
  );
}
