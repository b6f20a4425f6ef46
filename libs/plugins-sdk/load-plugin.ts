import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import {
  type LoadedPlugin,
  type LoadedRuntime,
  type Locale,
  LOCALES,
  PluginManifest,
  RuntimeManifest,
  STATIC_AUDIENCE_MESSAGE,
  type StaticPromptSegment,
} from './manifest';
import { EngineError } from '../errors';

/** A PLUGIN.<locale>.md's front matter may only translate static segment content, by id. */
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

/** A RUNTIME.<locale>.md gives only the localized body: its front matter, if any, is empty. */
const RuntimeVariantFrontMatter = z.object({}).strict();

/** Default server entries, in order of preference, relative to the plugin folder. */
export const DEFAULT_ENTRIES = ['server/index.ts', 'server/index.js'] as const;

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

/** Splits a Markdown file into its YAML front matter (possibly empty: `---` then `---`) and body. */
export function splitFrontMatter(text: string, file: string): { data: unknown; body: string } {
  const match = /^---\r?\n(?:([\s\S]*?)\r?\n)?---(?:\r?\n|$)([\s\S]*)$/.exec(text);
  if (!match) return { data: {}, body: text.trim() };
  try {
    return { data: parseYaml(match[1] ?? '') ?? {}, body: match[2].trim() };
  } catch (error) {
    throw new PluginManifestError(file, [{ path: '(yaml)', message: error instanceof Error ? error.message : String(error) }]);
  }
}

function parseWith<T extends z.ZodType>(schema: T, data: unknown, file: string): z.infer<T> {
  const parsed = schema.safeParse(data);
  if (!parsed.success) throw new PluginManifestError(file, manifestIssues(parsed.error));
  return parsed.data;
}

/** Parses the text of a root PLUGIN.md into a validated manifest and body. */
export function parsePluginFile(text: string, file = 'PLUGIN.md'): { manifest: PluginManifest; body: string } {
  const { data, body } = splitFrontMatter(text, file);
  return { manifest: parseWith(PluginManifest, data, file), body };
}

/** Parses the text of a child runtimes/<id>/RUNTIME.md into a validated runtime manifest and body. */
export function parseRuntimeFile(text: string, file = 'RUNTIME.md'): { manifest: RuntimeManifest; body: string } {
  const { data, body } = splitFrontMatter(text, file);
  return { manifest: parseWith(RuntimeManifest, data, file), body };
}

/** Bodies per locale: `<stem>.md` for English, `<stem>.<locale>.md` where present, English otherwise. */
function localizedBodies(dir: string, stem: string, english: string, onVariant: (locale: Locale, data: unknown, file: string) => void): Record<Locale, string> {
  const bodies = { en: english } as Record<Locale, string>;
  for (const locale of LOCALES) {
    if (locale === 'en') continue;
    const file = join(dir, `${stem}.${locale}.md`);
    if (!existsSync(file)) {
      bodies[locale] = english;
      continue;
    }
    const parsed = splitFrontMatter(readFileSync(file, 'utf8'), file);
    onVariant(locale, parsed.data, file);
    bodies[locale] = parsed.body;
  }
  return bodies;
}

/** `contributes.prompt` per locale: a PLUGIN.<locale>.md may translate a segment's content by id. */
function localizedSegments(manifest: PluginManifest, variants: Map<Locale, { data: unknown; file: string }>): Record<Locale, StaticPromptSegment[]> {
  const prompt = manifest.contributes.prompt;
  const known = new Set(prompt.map((p) => p.id));
  const out = {} as Record<Locale, StaticPromptSegment[]>;
  for (const locale of LOCALES) {
    const variant = variants.get(locale);
    if (!variant) {
      out[locale] = prompt;
      continue;
    }
    const localized = parseWith(VariantFrontMatter, variant.data, variant.file);
    const strays = localized.contributes.prompt.flatMap((p, n) =>
      known.has(p.id) ? [] : [{ path: `contributes.prompt.${n}.id`, message: `no static segment "${p.id}" in PLUGIN.md to translate` }],
    );
    if (strays.length > 0) throw new PluginManifestError(variant.file, strays);
    const content = new Map(localized.contributes.prompt.map((p) => [p.id, p.content]));
    out[locale] = prompt.map((p) => ({ ...p, content: content.get(p.id) ?? p.content }));
  }
  return out;
}

/** The server entry's absolute path: the declared `entry` (it must exist inside the folder), else a default one that exists, else null. */
function resolveEntry(root: string, manifest: PluginManifest, file: string): string | null {
  const base = resolve(root);
  if (manifest.entry === undefined) {
    const found = DEFAULT_ENTRIES.map((e) => join(base, e)).find((p) => existsSync(p));
    return found ?? null;
  }
  const entry = resolve(base, manifest.entry);
  const inside = relative(base, entry);
  if (inside === '' || inside.startsWith('..') || isAbsolute(inside)) {
    throw new PluginManifestError(file, [{ path: 'entry', message: `"${manifest.entry}" is outside the plugin folder` }]);
  }
  if (!existsSync(entry)) throw new PluginManifestError(file, [{ path: 'entry', message: `"${manifest.entry}" does not exist` }]);
  return entry;
}

/** Child runtimes: every folder under runtimes/, each with a RUNTIME.md whose id is the folder's name. */
function loadChildRuntimes(root: string, pluginId: string): LoadedRuntime[] {
  const dir = join(root, 'runtimes');
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const folder = join(dir, name);
      const file = join(folder, 'RUNTIME.md');
      if (!existsSync(file)) throw new PluginManifestError(folder, [{ path: '(folder)', message: 'a runtime folder needs a RUNTIME.md' }]);
      const { manifest, body } = parseRuntimeFile(readFileSync(file, 'utf8'), file);
      if (manifest.id !== name) {
        throw new PluginManifestError(file, [
          { path: 'id', message: `"${manifest.id}" does not match its folder runtimes/${name} (the folder name is the runtime's id)` },
        ]);
      }
      const bodies = localizedBodies(folder, 'RUNTIME', body, (_, data, variant) => parseWith(RuntimeVariantFrontMatter, data, variant));
      return { id: manifest.id, fullId: `${pluginId}/${manifest.id}`, manifest, bodies, file, inline: false };
    });
}

/**
 * Loads one plugin folder: PLUGIN.md (manifest, the inline runtime's body) with its locale variants
 * PLUGIN.<locale>.md, child runtimes runtimes/<id>/RUNTIME.md with theirs, and the server entry's path.
 */
export function loadPlugin(root: string): LoadedPlugin {
  const file = join(root, 'PLUGIN.md');
  const { manifest, body } = parsePluginFile(readFileSync(file, 'utf8'), file);
  const variants = new Map<Locale, { data: unknown; file: string }>();
  const bodies = localizedBodies(root, 'PLUGIN', body, (locale, data, variant) => variants.set(locale, { data, file: variant }));
  const staticSegments = localizedSegments(manifest, variants);
  const runtimes: LoadedRuntime[] = [];
  if (manifest.runtime) {
    const id = manifest.runtime.id ?? manifest.id;
    runtimes.push({ id, fullId: `${manifest.id}/${id}`, manifest: { ...manifest.runtime, id }, bodies, file, inline: true });
  }
  for (const child of loadChildRuntimes(root, manifest.id)) {
    if (runtimes.some((r) => r.id === child.id)) {
      throw new PluginManifestError(child.file, [{ path: 'id', message: `runtime "${child.id}" is also the inline runtime of PLUGIN.md` }]);
    }
    runtimes.push(child);
  }
  return { manifest, bodies, staticSegments, runtimes, entry: resolveEntry(root, manifest, file), root };
}

const byId = (a: LoadedPlugin, b: LoadedPlugin) => (a.manifest.id < b.manifest.id ? -1 : a.manifest.id > b.manifest.id ? 1 : 0);

/** The plugins one folder gives: itself when it holds a PLUGIN.md, else each child folder that does. */
function pluginsIn(dir: string): LoadedPlugin[] {
  if (!existsSync(dir)) throw new PluginManifestError(dir, [{ path: '(folder)', message: 'no such plugin folder' }]);
  if (existsSync(join(dir, 'PLUGIN.md'))) return [loadPlugin(dir)];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, 'PLUGIN.md')))
    .map((d) => loadPlugin(join(dir, d.name)));
}

/**
 * Loads the plugins of several folders, sorted by plugin id. Each folder is either one plugin (it
 * holds a PLUGIN.md) or a folder of plugin folders (as `plugins/`). Plugin ids are unique across
 * all of them: an id found twice is an error naming both manifests (no folder overrides another).
 */
export function loadPluginFolders(dirs: readonly string[]): LoadedPlugin[] {
  return uniqueById(dirs.flatMap(pluginsIn));
}

/** Loads every plugin folder (one with a PLUGIN.md) under a directory, sorted by plugin id; plugin ids are unique. */
export function loadPlugins(dir: string): LoadedPlugin[] {
  const plugins = readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, 'PLUGIN.md')))
    .map((d) => loadPlugin(join(dir, d.name)));
  return uniqueById(plugins);
}

/** Sorted by plugin id; an id found twice is an error naming both manifests. */
function uniqueById(loaded: LoadedPlugin[]): LoadedPlugin[] {
  const plugins = [...loaded].sort(byId);
  for (let i = 1; i < plugins.length; i++) {
    if (plugins[i].manifest.id === plugins[i - 1].manifest.id) {
      throw new PluginManifestError(join(plugins[i].root, 'PLUGIN.md'), [
        { path: 'id', message: `plugin id "${plugins[i].manifest.id}" is also the id of ${join(plugins[i - 1].root, 'PLUGIN.md')}` },
      ]);
    }
  }
  return plugins;
}
