import { z } from 'zod';

/** Runtime declaration inside a plugin manifest (PLUGIN.md front matter). */
export const RuntimeManifest = z.object({
  id: z.string().regex(/^[a-z][a-z0-9-]*$/, 'lower-case id: letters, digits, dashes'),
  /** Stage this runtime runs in; runtimes with no stage run after all stages. */
  stage: z.string().nullable().default(null),
  outputKind: z.enum(['story', 'structured', 'none']).default('none'),
  slot: z.string().default('story'),
  stream: z.boolean().default(false),
  agent: z
    .object({
      history: z
        .object({
          maxTurns: z.number().int().nonnegative().optional(),
          includeSummaries: z.boolean().default(false),
        })
        .default({ includeSummaries: false }),
    })
    .default({ history: { includeSummaries: false } }),
});

export const PluginManifest = z.object({
  id: z.string().regex(/^[a-z][a-z0-9-]*$/, 'lower-case id: letters, digits, dashes'),
  name: z.string().min(1),
  version: z.string().min(1),
  description: z.string().optional(),
  runtimes: z.array(RuntimeManifest).default([]),
});

export type RuntimeManifest = z.infer<typeof RuntimeManifest>;
export type PluginManifest = z.infer<typeof PluginManifest>;
export type Locale = 'en' | 'zh-Hans';
export const LOCALES: readonly Locale[] = ['en', 'zh-Hans'];

/** A loaded plugin: manifest plus the localized body of the root file. */
export interface LoadedPlugin {
  manifest: PluginManifest;
  /** Body text per locale; 'en' is always present. */
  bodies: Record<Locale, string>;
  root: string;
}
