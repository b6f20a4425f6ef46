import { z } from 'zod';
import type { ErrorIssue } from '../errors';
import { canonicalLocaleTag, type WorldManifest } from '../plugins-sdk';
import { HarnessOptionsError } from './errors';

/**
 * One scripted model reply: text (a string, or `{ text }`), JSON (`{ json }`, sent as its JSON text),
 * or a tool call (`{ tool, args }`).
 */
export type ScriptedReply = string | { text: string } | { json: unknown } | { tool: string; args?: Record<string, unknown> };

/** A world given inline: the fields of a `WORLD.md` front matter (`id` optional), and its lore text. */
export type InlineWorld = Omit<z.input<typeof WorldManifest>, 'id'> & { id?: string; lore?: string };

/** What `createPluginHarness` takes. Unknown keys are errors (a typo never silently does nothing). */
export interface PluginHarnessOptions {
  /** Plugin folders (each with a `PLUGIN.md`), absolute or relative to the working directory. */
  plugins?: readonly string[];
  /** Also load the built-in plugins (the repository's `plugins/`). Default false. */
  builtins?: boolean;
  /** A world folder (with `WORLD.md`), a `WORLD.md` file, or a world inline; none: the session has no world. */
  world?: string | InlineWorld;
  /** The session's BCP 47 locale. Default `en`. */
  locale?: string;
  /**
   * Scripted model replies per runtime (`'<plugin-id>/<runtime-id>'`) and `default` for every other
   * runtime. One reply answers every call; a list answers the calls in order, and once it is used
   * up the runtime falls back to `default`, then to the emulator's own deterministic reply.
   */
  replies?: Readonly<Record<string, ScriptedReply | readonly ScriptedReply[]>>;
  /** The model slots file (`llm.toml`); default the repository's. Every slot is answered by the harness's emulator, never a real provider. */
  llmConfig?: string;
  /** How long an extension handler or hook may take (the engine's `COVEL_PLUGIN_HANDLER_TIMEOUT_MS`). */
  handlerTimeoutMs?: number;
  /** How long `turn()` waits for a turn to end. Default 30,000 ms. */
  turnTimeoutMs?: number;
  /** The player's configuration of plugins (`{{ userSettings.* }}`, `ctx.settings`), checked against each plugin's `contributes.settings`. */
  pluginSettings?: Readonly<Record<string, Readonly<Record<string, string | number | boolean>>>>;
  /**
   * The plugins the session runs (ids of loaded plugins). Default: every folder in `plugins`
   * (`enabledByDefault: false` ones too), and of the built-ins (`builtins: true`) the ones the
   * world's `plugins` list names, else the ones enabled by default.
   */
  sessionPlugins?: readonly string[];
}

const Reply = z.union([
  z.string(),
  z.object({ text: z.string() }).strict(),
  z.object({ json: z.json() }).strict(),
  z.object({ tool: z.string().min(1), args: z.record(z.string(), z.unknown()).optional() }).strict(),
]);

const Options = z
  .object({
    plugins: z.array(z.string().min(1)).default([]),
    builtins: z.boolean().default(false),
    world: z.union([z.string().min(1), z.record(z.string(), z.unknown())]).optional(),
    locale: z
      .string()
      .default('en')
      .refine((tag) => canonicalLocaleTag(tag) !== null, 'must be a well-formed BCP 47 language tag'),
    replies: z.record(z.string(), z.union([Reply, z.array(Reply).min(1)])).default({}),
    llmConfig: z.string().min(1).optional(),
    handlerTimeoutMs: z.number().int().positive().optional(),
    turnTimeoutMs: z.number().int().positive().default(30_000),
    pluginSettings: z.record(z.string(), z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]))).optional(),
    sessionPlugins: z.array(z.string().min(1)).optional(),
  })
  .strict()
  .refine((o) => o.plugins.length > 0 || o.builtins, { message: 'give at least one plugin folder (or builtins: true)', path: ['plugins'] });

export type ParsedOptions = Omit<z.output<typeof Options>, 'world' | 'replies'> & {
  world?: string | Record<string, unknown>;
  replies: Record<string, ScriptedReply | ScriptedReply[]>;
};

/** `a.b[0]` style paths; record keys that are not identifiers in quotes (`replies["my-plugin/main"]`). */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (typeof part === 'string' && /^[A-Za-z_$][\w$]*$/.test(part)) out += out ? `.${part}` : part;
    else out += `[${JSON.stringify(String(part))}]`;
  }
  return out || '(options)';
}

export function zodIssues(error: z.ZodError, prefix: readonly PropertyKey[] = []): ErrorIssue[] {
  return error.issues.map((i) => {
    const unknownKeys = i.code === 'unrecognized_keys' ? i.keys : [];
    if (unknownKeys.length > 0) return { path: fieldPath([...prefix, ...i.path, unknownKeys[0]]), message: 'unknown key' };
    return { path: fieldPath([...prefix, ...i.path]), message: i.message };
  });
}

/** Validates the options; a `HarnessOptionsError` names every bad field. */
export function parseOptions(input: unknown): ParsedOptions {
  const parsed = Options.safeParse(input ?? {});
  if (!parsed.success) throw new HarnessOptionsError(zodIssues(parsed.error));
  return parsed.data as ParsedOptions;
}
