import { z } from 'zod';

/** Runtime declaration inside a plugin manifest (PLUGIN.md front matter). */
export const RuntimeManifest = z
  .object({
    id: z.string().regex(/^[a-z][a-z0-9-]*$/, 'lower-case id: letters, digits, dashes'),
    /** Stage this runtime runs in; runtimes with no stage run after all stages. */
    stage: z.string().nullable().default(null),
    outputKind: z.enum(['story', 'structured', 'none']).default('none'),
    /** Output contract this runtime fulfils, e.g. `narrative-engine@2`. */
    contract: z.string().optional(),
    slot: z.string().default('story'),
    stream: z.boolean().default(false),
    agent: z
      .object({
        /** `false`: the model's off switch, where the request has no explicit reasoning setting (spec §3). */
        reasoning: z.literal(false).optional(),
        /** A named tool, or `required` (a declared tool must be called). */
        toolChoice: z.union([z.literal('required'), z.object({ name: z.string().min(1) }).strict()]).optional(),
        history: z
          .object({
            maxTurns: z.number().int().nonnegative().optional(),
            /** Default: summaries merged for the shared view, left out for a windowed runtime. */
            includeSummaries: z.boolean().optional(),
          })
          .strict()
          .default({}),
      })
      .strict()
      .default({ history: {} }),
  })
  .strict();

export const SegmentPosition = z.union([z.enum(['system', 'pre-history', 'post-history']), z.object({ depth: z.number().int().nonnegative() }).strict()]);

/**
 * Spec §3 "Fixed instructions": static segments apply to their own plugin, so `contributes.prompt`
 * takes no audience; text for other plugins' runtimes is a `prompt.segment@1` segment.
 */
export const STATIC_AUDIENCE_MESSAGE =
  'static segments always cover their own plugin\'s runtimes and take no audience; for text meant for other plugins\' runtimes, return a segment with an audience from a prompt.segment@1 extension (api.provideExtension, spec §3 "Dynamic content")';

/** A fixed instruction in `contributes.prompt` (spec §3): registered by the host, not interpolated, for this plugin's runtimes only. */
export const StaticPromptSegment = z
  .object({
    id: z.string().min(1),
    content: z.string().min(1),
    position: SegmentPosition.default('system'),
    role: z.enum(['system', 'user', 'assistant']).default('system'),
    volatility: z.enum(['stable', 'session', 'turn']).default('stable'),
    order: z.number().int().default(0),
    /** Rejected with {@link STATIC_AUDIENCE_MESSAGE} (a plain unknown key would not say why). */
    audience: z.never({ error: STATIC_AUDIENCE_MESSAGE }).optional(),
  })
  .strict();

export const PluginManifest = z
  .object({
    id: z.string().regex(/^[a-z][a-z0-9-]*$/, 'lower-case id: letters, digits, dashes'),
    name: z.string().min(1),
    version: z.string().min(1),
    description: z.string().optional(),
    /** The server entry, relative to the plugin folder; default `server/index.ts` when that file exists. */
    entry: z.string().min(1).optional(),
    runtimes: z.array(RuntimeManifest).default([]),
    contributes: z
      .object({
        prompt: z.array(StaticPromptSegment).default([]),
        /** What the server entry registers with `api.provideExtension(point, id, …)`: checked both ways at start-up. */
        extensions: z.array(z.object({ point: z.string().min(1), id: z.string().min(1) }).strict()).default([]),
      })
      .strict()
      .default({ prompt: [], extensions: [] }),
  })
  .strict();

export type RuntimeManifest = z.infer<typeof RuntimeManifest>;
export type PluginManifest = z.infer<typeof PluginManifest>;
export type StaticPromptSegment = z.infer<typeof StaticPromptSegment>;
export type Locale = 'en' | 'zh-Hans';
export const LOCALES: readonly Locale[] = ['en', 'zh-Hans'];

/** A loaded plugin: manifest plus the localized body of the root file. */
export interface LoadedPlugin {
  manifest: PluginManifest;
  /** Body text per locale; 'en' is always present. */
  bodies: Record<Locale, string>;
  /** `contributes.prompt` per locale (a locale variant file may give its own content by id). */
  staticSegments: Record<Locale, StaticPromptSegment[]>;
  root: string;
  /** Absolute path of the server entry (`entry`, or `server/index.ts` when present); null: no code. */
  entryPath: string | null;
}
