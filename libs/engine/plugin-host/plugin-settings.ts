import type { ErrorIssue } from '../../errors';
import type { LoadedPlugin, SettingContribution } from '../../plugins-sdk';

/** The player's configuration: plugin id → setting key → value (recorded in `session.created@1`). */
export type PluginSettings = Readonly<Record<string, Readonly<Record<string, SettingValue>>>>;

/** A setting's value: `contributes.settings` types are string, number, boolean and enum (a string). */
export type SettingValue = string | number | boolean;

/**
 * A plugin's settings as `{{ userSettings.* }}` and `ctx.settings` read them: every key the root
 * manifest declares in `contributes.settings`, the player's value when configured, else the
 * default. Keys the plugin does not declare are not offered.
 */
export function composeSettings(plugin: LoadedPlugin | undefined, configured: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const setting of plugin?.manifest.contributes.settings ?? []) {
    const value = configured && Object.hasOwn(configured, setting.key) ? configured[setting.key] : setting.default;
    Object.defineProperty(out, setting.key, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function typeIssue(setting: SettingContribution, value: unknown): string | null {
  switch (setting.type) {
    case 'string':
      return typeof value === 'string' ? null : 'must be a string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? null : 'must be a finite number';
    case 'boolean':
      return typeof value === 'boolean' ? null : 'must be a boolean';
    case 'enum':
      return typeof value === 'string' && setting.values.includes(value) ? null : `must be one of ${setting.values.map((v) => JSON.stringify(v)).join(', ')}`;
  }
}

/**
 * Checks a player's configuration against the loaded plugins' declared settings: an unknown
 * plugin, an undeclared key or a value of the wrong type is an issue naming its path
 * (`pluginSettings.<pluginId>.<key>`).
 */
export function pluginSettingsIssues(plugins: readonly LoadedPlugin[], settings: PluginSettings): ErrorIssue[] {
  const issues: ErrorIssue[] = [];
  for (const [pluginId, values] of Object.entries(settings)) {
    const plugin = plugins.find((p) => p.manifest.id === pluginId);
    const path = `pluginSettings.${pluginId}`;
    if (!plugin) {
      issues.push({ path, message: `no loaded plugin "${pluginId}"` });
      continue;
    }
    for (const [key, value] of Object.entries(values)) {
      const setting = plugin.manifest.contributes.settings.find((s) => s.key === key);
      if (!setting) {
        issues.push({ path: `${path}.${key}`, message: `plugin ${pluginId} declares no setting "${key}" in contributes.settings` });
        continue;
      }
      const problem = typeIssue(setting, value);
      if (problem) issues.push({ path: `${path}.${key}`, message: `${problem} (setting "${key}" of plugin ${pluginId} is ${setting.type})` });
    }
  }
  return issues;
}
