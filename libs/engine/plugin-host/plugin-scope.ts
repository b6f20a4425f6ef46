import type { LoadedPlugin, PluginSdk } from '../../plugins-sdk';
import { composeSettings, type PluginSettings } from './plugin-settings';

const sdks = new WeakMap<LoadedPlugin, PluginSdk>();

/** The SDK one plugin gets (`api.sdk`, `ctx.sdk`): the shared helpers and its own folder (`pluginRoot`). Made once per loaded plugin. */
export function pluginSdkFor(plugin: LoadedPlugin | undefined, shared: PluginSdk): PluginSdk {
  if (!plugin) return shared;
  let sdk = sdks.get(plugin);
  if (!sdk) sdks.set(plugin, (sdk = Object.freeze({ ...shared, pluginRoot: plugin.root })));
  return sdk;
}

/** `ctx.settings`: the plugin's declared settings, the player's configuration over the defaults (the same values as `{{ userSettings.* }}`). */
export function pluginSettingsFor(plugin: LoadedPlugin | undefined, settings: PluginSettings | undefined): Readonly<Record<string, unknown>> {
  const pluginId = plugin?.manifest.id;
  const configured = pluginId !== undefined && settings && Object.hasOwn(settings, pluginId) ? settings[pluginId] : undefined;
  return Object.freeze(composeSettings(plugin, configured));
}
