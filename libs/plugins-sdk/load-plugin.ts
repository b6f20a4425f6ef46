import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { type LoadedPlugin, type Locale, LOCALES, PluginManifest, STATIC_AUDIENCE_MESSAGE, type StaticPromptSegment } from './manifest';
import { EngineError } from '../errors';

/** A locale variant's front matter may only translate static segment content, by id. */
const VariantFrontMatter = z
  .object({
    contributes: z
      .object({
        prompt: z
          .array(z.object({ id: z.string(), content: z.string().min(1), audience: z.never({ error: STATIC_AUDIENCE_MESSAGE }).optional() }).strict())
          .default([]),
      })
      .strict()
      .default({ prompt: [] }),
  })
  .strict();

export interface ManifestIssue {
  path: string;
  message: string;
}

/**
 * zod issues as `path: message`, with one `<path>.<key>: unknown key` per key a strict object
 * does not know (zod reports them together, at the object's path).
 */
export function manifestIssues(error: z.ZodError): ManifestIssue[] {
  return error.issues.flatMap((i) =>
    i.code === 'unrecognized_keys'
      ? i.keys.map((key) => ({ path: [...i.path, key].join('.'), message: 'unknown key' }))
      : [{ path: i.path.join('.'), message: i.message }],
  );
}

export class PluginManifestError extends EngineError {
  readonly code = 'PLUGIN_MANIFEST_INVALID';
  readonly category = 'invalid';
  constructor(
    readonly file: string,
    override readonly issues: ManifestIssue[],
  ) {
    super(`${file}: ${issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}`);
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
  if (!parsed.success) throw new PluginManifestError(file, manifestIssues(parsed.error));
  return { manifest: parsed.data, body };
}

/** Loads one plugin folder: PLUGIN.md plus locale variants PLUGIN.<locale>.md (body only). */
export function loadPlugin(root: string): LoadedPlugin {
  const file = join(root, 'PLUGIN.md');
  const { manifest, body } = parsePluginFile(readFileSync(file, 'utf8'), file);
  const bodies = { en: body } as Record<Locale, string>;
  const staticSegments = { en: manifest.contributes.prompt } as Record<Locale, StaticPromptSegment[]>;
  for (const locale of LOCALES) {
    const variant = join(root, `PLUGIN.${locale}.md`);
    if (locale === 'en' || !existsSync(variant)) continue;
    const parsed = splitFrontMatter(readFileSync(variant, 'utf8'), variant);
    bodies[locale] = parsed.body;
    const localized = VariantFrontMatter.safeParse(parsed.data);
    if (!localized.success) throw new PluginManifestError(variant, manifestIssues(localized.error));
    const known = new Set(manifest.contributes.prompt.map((p) => p.id));
    const strays = localized.data.contributes.prompt.flatMap((p, n) =>
      known.has(p.id) ? [] : [{ path: `contributes.prompt.${n}.id`, message: `no static segment "${p.id}" in PLUGIN.md to translate` }],
    );
    if (strays.length > 0) throw new PluginManifestError(variant, strays);
    const content = new Map(localized.data.contributes.prompt.map((p) => [p.id, p.content]));
    staticSegments[locale] = manifest.contributes.prompt.map((p) => ({ ...p, content: content.get(p.id) ?? p.content }));
  }
  for (const locale of LOCALES) {
    bodies[locale] ??= body;
    staticSegments[locale] ??= manifest.contributes.prompt;
  }
  return { manifest, bodies, staticSegments, root, entryPath: entryPathOf(root, manifest, file) };
}

/** Default server entry of a plugin folder (PLUGIN-API.md "Manifest fields"). */
export const DEFAULT_ENTRY = join('server', 'index.ts');

/**
 * The plugin's server entry: `entry` (must exist, inside the folder), else `server/index.ts`
 * when that file exists, else none.
 */
function entryPathOf(root: string, manifest: PluginManifest, file: string): string | null {
  if (manifest.entry === undefined) {
    const fallback = join(root, DEFAULT_ENTRY);
    return existsSync(fallback) ? resolve(fallback) : null;
  }
  const path = resolve(root, manifest.entry);
  const inside = relative(resolve(root), path);
  if (inside === '' || inside.startsWith('..') || isAbsolute(inside)) {
    throw new PluginManifestError(file, [{ path: 'entry', message: `"${manifest.entry}" is not a file inside the plugin folder` }]);
  }
  if (!existsSync(path)) throw new PluginManifestError(file, [{ path: 'entry', message: `"${manifest.entry}" does not exist` }]);
  return path;
}

/** Loads every plugin folder (one with a PLUGIN.md) under a directory, sorted by plugin id. */
export function loadPlugins(dir: string): LoadedPlugin[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, 'PLUGIN.md')))
    .map((d) => loadPlugin(join(dir, d.name)))
    .sort((a, b) => (a.manifest.id < b.manifest.id ? -1 : a.manifest.id > b.manifest.id ? 1 : 0));
}
