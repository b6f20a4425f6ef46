import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { manifestIssues, PluginManifestError, splitFrontMatter } from './load-plugin';

/** An entry's optional settings (spec §4 spells the scan range `extra.scanDepth`). */
export const LoreEntryExtra = z
  .object({
    /** Committed messages scanned besides the current player message (spec §4: 0–20). */
    scanDepth: z.number().int().min(0).max(20).default(0),
  })
  .strict();

export const LoreEntry = z
  .object({
    id: z.string().min(1),
    keys: z.array(z.string().min(1)).default([]),
    /** Always active, without a keyword. */
    constant: z.boolean().default(false),
    content: z.string().min(1),
    position: z.union([z.enum(['before-plugin', 'after-plugin']), z.object({ depth: z.number().int().nonnegative() }).strict()]).default('after-plugin'),
    order: z.number().int().default(0),
    extra: LoreEntryExtra.default({ scanDepth: 0 }),
  })
  .strict();

export const WorldCharacter = z
  .object({
    id: z.string().min(1),
    name: z.string().min(1),
    /** Other names the character goes by (spec §4 `characters.npcs`: "(aka alias, …)"). */
    aliases: z.array(z.string().min(1)).default([]),
    type: z.string().default('npc'),
    description: z.string().default(''),
  })
  .strict();

export const WorldManifest = z
  .object({
    id: z.string().regex(/^[a-z][a-z0-9-]*$/),
    name: z.string().min(1),
    description: z.string().default(''),
    /** `{{ world.tags }}` (spec §4). */
    tags: z.array(z.string().min(1)).default([]),
    characters: z.array(WorldCharacter).default([]),
    lorebook: z.array(LoreEntry).default([]),
  })
  .strict();

export type LoreEntry = z.infer<typeof LoreEntry>;
export type WorldManifest = z.infer<typeof WorldManifest>;
export interface LoadedWorld extends WorldManifest {
  /** The whole lore body text. */
  lore: string;
}

/**
 * Loads a world file: YAML front matter (name, characters, lorebook) and the lore as its body.
 * An unknown key anywhere is an error naming the file and the key's path.
 */
export function loadWorld(file: string): LoadedWorld {
  const { data, body } = splitFrontMatter(readFileSync(file, 'utf8'), file);
  const parsed = WorldManifest.safeParse(data);
  if (!parsed.success) throw new PluginManifestError(file, manifestIssues(parsed.error));
  return { ...parsed.data, lore: body };
}
