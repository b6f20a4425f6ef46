import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { PluginManifestError, splitFrontMatter } from './load-plugin';

export const LoreEntry = z.object({
  id: z.string().min(1),
  keys: z.array(z.string().min(1)).default([]),
  /** Always active, without a keyword. */
  constant: z.boolean().default(false),
  content: z.string().min(1),
  position: z.union([z.enum(['before-plugin', 'after-plugin']), z.object({ depth: z.number().int().nonnegative() }).strict()]).default('after-plugin'),
  order: z.number().int().default(0),
  /** Committed messages scanned besides the current player message (spec §4: 0–20). */
  scanDepth: z.number().int().min(0).max(20).default(0),
});

export const WorldCharacter = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  type: z.string().default('npc'),
  description: z.string().default(''),
});

export const WorldManifest = z.object({
  id: z.string().regex(/^[a-z][a-z0-9-]*$/),
  name: z.string().min(1),
  description: z.string().default(''),
  characters: z.array(WorldCharacter).default([]),
  lorebook: z.array(LoreEntry).default([]),
});

export type LoreEntry = z.infer<typeof LoreEntry>;
export type WorldManifest = z.infer<typeof WorldManifest>;
export interface LoadedWorld extends WorldManifest {
  /** The whole lore body text. */
  lore: string;
}

/** Loads a world file: YAML front matter (name, characters, lorebook) and the lore as its body. */
export function loadWorld(file: string): LoadedWorld {
  const { data, body } = splitFrontMatter(readFileSync(file, 'utf8'), file);
  const parsed = WorldManifest.safeParse(data);
  if (!parsed.success)
    throw new PluginManifestError(
      file,
      parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    );
  return { ...parsed.data, lore: body };
}
