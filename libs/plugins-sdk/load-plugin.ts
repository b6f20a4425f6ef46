import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { LoadedPlugin, Locale, LOCALES, PluginManifest } from './manifest';

export class PluginManifestError extends Error {
  constructor(
    readonly file: string,
    readonly issues: { path: string; message: string }[],
  ) {
    super(`${file}: ${issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}`);
    this.name = 'PluginManifestError';
  }
}

/** Splits a Markdown file into its YAML front matter and body. */
export function splitFrontMatter(text: string, file: string): { data: unknown; body: string } {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/.exec(text);
  if (!match) return { data: {}, body: text.trim() };
  try {
    return { data: parseYaml(match[1]) ?? {}, body: match[2].trim() };
  } catch (error) {
    throw new PluginManifestError(file, [{ path: '(yaml)', message: error instanceof Error ? error.message : String(error) }]);
  }
}

/** Parses the text of a root PLUGIN.md into a validated manifest and body. */
export function parsePluginFile(text: string, file = 'PLUGIN.md'): { manifest: PluginManifest; body: string } {
  const { data, body } = splitFrontMatter(text, file);
  const parsed = PluginManifest.safeParse(data);
  if (!parsed.success) {
    throw new PluginManifestError(file, parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })));
  }
  return { manifest: parsed.data, body };
}

/** Loads one plugin folder: PLUGIN.md plus locale variants PLUGIN.<locale>.md (body only). */
export function loadPlugin(root: string): LoadedPlugin {
  const file = join(root, 'PLUGIN.md');
  const { manifest, body } = parsePluginFile(readFileSync(file, 'utf8'), file);
  const bodies = { en: body } as Record<Locale, string>;
  for (const locale of LOCALES) {
    const variant = join(root, `PLUGIN.${locale}.md`);
    if (locale !== 'en' && existsSync(variant)) bodies[locale] = splitFrontMatter(readFileSync(variant, 'utf8'), variant).body;
  }
  for (const locale of LOCALES) bodies[locale] ??= body;
  return { manifest, bodies, root };
}

/** Loads every plugin folder (one with a PLUGIN.md) under a directory, sorted by plugin id. */
export function loadPlugins(dir: string): LoadedPlugin[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, 'PLUGIN.md')))
    .map((d) => loadPlugin(join(dir, d.name)))
    .sort((a, b) => (a.manifest.id < b.manifest.id ? -1 : a.manifest.id > b.manifest.id ? 1 : 0));
}
