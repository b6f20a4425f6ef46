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

/** A JSON schema, as an object; its keywords are not checked here. */
export const JsonSchemaObject = z.record(z.string(), z.unknown());

/** One property of the character schema; a numeric one may declare its range (spec §4 "2/5"). */
export const CharacterSchemaProperty = z
  .object({
    type: z.union([z.string(), z.array(z.string())]).optional(),
    description: z.string().optional(),
    minimum: z.number().optional(),
    maximum: z.number().optional(),
  })
  .catchall(z.unknown())
  .refine((p) => p.minimum === undefined || p.maximum === undefined || p.minimum <= p.maximum, {
    message: 'minimum is greater than maximum',
    path: ['minimum'],
  });

/** The schema of a character's `fields` (a JSON schema of type object). */
export const CharacterSchema = z
  .object({
    type: z.literal('object').default('object'),
    description: z.string().optional(),
    properties: z.record(z.string(), CharacterSchemaProperty).default({}),
    required: z.array(z.string()).optional(),
  })
  .strict();

/**
 * A character's roleplay notes (spec §4 "Character notes for the narrative"): what the
 * `character-blueprint` plugin writes into `<character-notes>`. Every field is optional.
 */
export const CharacterBlueprint = z
  .object({
    tone: z.string().min(1).optional(),
    manner: z.string().min(1).optional(),
    personality: z.string().min(1).optional(),
    goals: z.array(z.string().min(1)).optional(),
    fears: z.array(z.string().min(1)).optional(),
    secrets: z.array(z.string().min(1)).optional(),
    /** Keyed by the other character's id. */
    relationships: z.record(z.string(), z.string().min(1)).optional(),
    rules: z.array(z.string().min(1)).optional(),
    sampleLines: z.array(z.string().min(1)).optional(),
  })
  .strict();

export const WorldCharacter = z
  .object({
    id: z.string().min(1),
    name: z.string().min(1),
    /** Other names the character goes by (spec §4 `characters.npcs`: "(aka alias, …)"). */
    aliases: z.array(z.string().min(1)).default([]),
    /** `npc`, `player`, or the world's own kinds. */
    type: z.string().min(1).default('npc'),
    description: z.string().default(''),
    /** The character sheet's attributes, described by the world's `characterSchema`. */
    fields: z.record(z.string(), z.unknown()).default({}),
    /** Roleplay notes for the narrative (`character-blueprint`); never part of the character sheet. */
    blueprint: CharacterBlueprint.optional(),
  })
  .strict();

/** A place a player sits; `characterId` is the character played from it. */
export const WorldSeat = z
  .object({
    id: z.string().min(1),
    label: z.string().optional(),
    characterId: z.string().min(1).optional(),
    /** The primary seat (spec §4 `player.character`); without one, the first seat is primary. */
    primary: z.boolean().default(false),
  })
  .strict();

/** A dynamic dimension's declaration (spec §4 `world.dimensions.<id>`). */
export const WorldDimension = z
  .object({
    name: z.string().min(1),
    description: z.string().optional(),
    schema: JsonSchemaObject.default({}),
    value: z.unknown().refine((v) => v !== undefined, { message: 'value is required' }),
    version: z.number().int().nonnegative().default(1),
    /**
     * How the dimension changes as the story goes on (the `world-init` tracker's rule). Without one
     * the dimension is constant within the session. Never shown to the story (spec §4 "Projection
     * does not change the source data").
     */
    updateRule: z.string().min(1).optional(),
  })
  .strict();

export const WorldManifest = z
  .object({
    id: z.string().regex(/^[a-z][a-z0-9-]*$/),
    name: z.string().min(1),
    description: z.string().default(''),
    /** `{{ world.tags }}` (spec §4). */
    tags: z.array(z.string().min(1)).default([]),
    /** `{{ world.schema }}`: the schema of the world's structured `entries`. */
    schema: JsonSchemaObject.default({}),
    /** `{{ world.entries }}`: structured world data (not lorebook entries, not dimensions). */
    entries: z.array(z.record(z.string(), z.unknown())).default([]),
    /** `{{ world.dimensions.<id>.value }}`, keyed by dimension id. */
    dimensions: z.record(z.string().regex(/^[A-Za-z][A-Za-z0-9_-]*$/), WorldDimension).default({}),
    characterSchema: CharacterSchema.default({ type: 'object', properties: {} }),
    characters: z.array(WorldCharacter).default([]),
    seats: z.array(WorldSeat).default([]),
    lorebook: z.array(LoreEntry).default([]),
    /**
     * The plugins a session in this world runs (plugin ids); without it, the plugins enabled by
     * default (a manifest's `enabledByDefault`). `POST /v1/sessions` `plugins` overrides it.
     */
    plugins: z.array(z.string().regex(/^[a-z][a-z0-9-]*$/)).optional(),
    /** The world's configuration for plugins, keyed by plugin id (e.g. `memory`'s initial blocks); each plugin reads its own. */
    pluginConfig: z.record(z.string(), z.record(z.string(), z.unknown())).default({}),
  })
  .strict()
  .superRefine((world, ctx) => {
    const characterIds = new Set<string>();
    world.characters.forEach((c, i) => {
      if (characterIds.has(c.id)) ctx.addIssue({ code: 'custom', path: ['characters', i, 'id'], message: `duplicate character id "${c.id}"` });
      characterIds.add(c.id);
      for (const [key, value] of Object.entries(c.fields)) {
        const property = Object.hasOwn(world.characterSchema.properties, key) ? world.characterSchema.properties[key] : undefined;
        if (!property || (property.minimum === undefined && property.maximum === undefined)) continue;
        const path = ['characters', i, 'fields', key];
        if (typeof value !== 'number') ctx.addIssue({ code: 'custom', path, message: 'expected a number (characterSchema declares a range)' });
        else if ((property.minimum !== undefined && value < property.minimum) || (property.maximum !== undefined && value > property.maximum))
          ctx.addIssue({ code: 'custom', path, message: `outside ${property.minimum ?? '-∞'}..${property.maximum ?? '∞'}` });
      }
    });
    const seatIds = new Set<string>();
    world.seats.forEach((s, i) => {
      if (seatIds.has(s.id)) ctx.addIssue({ code: 'custom', path: ['seats', i, 'id'], message: `duplicate seat id "${s.id}"` });
      seatIds.add(s.id);
      if (s.characterId !== undefined && !characterIds.has(s.characterId))
        ctx.addIssue({ code: 'custom', path: ['seats', i, 'characterId'], message: `no character "${s.characterId}"` });
    });
    if (world.seats.filter((s) => s.primary).length > 1) ctx.addIssue({ code: 'custom', path: ['seats'], message: 'more than one primary seat' });
  });

export type LoreEntry = z.infer<typeof LoreEntry>;
export type WorldCharacter = z.infer<typeof WorldCharacter>;
export type CharacterBlueprint = z.infer<typeof CharacterBlueprint>;
export type WorldSeat = z.infer<typeof WorldSeat>;
export type WorldDimension = z.infer<typeof WorldDimension>;
export type CharacterSchema = z.infer<typeof CharacterSchema>;
export type WorldManifest = z.infer<typeof WorldManifest>;
export interface LoadedWorld extends WorldManifest {
  /** The whole lore body text, its narrator-only parts included, without their marker lines (spec §4 `world.lore`). */
  lore: string;
  /**
   * The lore without its narrator-only parts (nor their marker lines): the kernel's `<world-lore>`
   * for every runtime that is not a story runtime. Equal to `lore` when the body has no such part.
   */
  sharedLore: string;
}

/** The marker lines around a part of a world's body meant for the narrator alone (each on a line of its own). */
export const NARRATOR_ONLY_OPEN = '<!-- narrator-only -->';
export const NARRATOR_ONLY_CLOSE = '<!-- /narrator-only -->';

/**
 * Splits a world's body at its narrator-only markers: `lore` keeps every line but the markers,
 * `sharedLore` also leaves out the lines between them. A marker is a line holding only the marker
 * (spaces around allowed); an unclosed, unopened or nested part is an error naming the line.
 */
/** True for a narrator-only marker line (the opening or the closing fence; spaces around allowed). */
export const isNarratorOnlyMarker = (line: string): boolean => line.trim() === NARRATOR_ONLY_OPEN || line.trim() === NARRATOR_ONLY_CLOSE;

export function splitWorldLore(body: string, file: string): { lore: string; sharedLore: string } {
  const lore: string[] = [];
  const shared: string[] = [];
  let openedAt: number | null = null;
  const lines = body.split('\n');
  lines.forEach((line, i) => {
    const marker = line.trim();
    const at = `body line ${i + 1}`;
    if (marker === NARRATOR_ONLY_OPEN) {
      if (openedAt !== null)
        throw new PluginManifestError(file, [{ path: at, message: `${NARRATOR_ONLY_OPEN} inside the narrator-only part opened at body line ${openedAt}` }]);
      openedAt = i + 1;
    } else if (marker === NARRATOR_ONLY_CLOSE) {
      if (openedAt === null) throw new PluginManifestError(file, [{ path: at, message: `${NARRATOR_ONLY_CLOSE} without an opening ${NARRATOR_ONLY_OPEN}` }]);
      openedAt = null;
    } else {
      lore.push(line);
      if (openedAt === null) shared.push(line);
    }
  });
  if (openedAt !== null)
    throw new PluginManifestError(file, [{ path: `body line ${openedAt}`, message: `${NARRATOR_ONLY_OPEN} is never closed by ${NARRATOR_ONLY_CLOSE}` }]);
  return { lore: lore.join('\n'), sharedLore: shared.join('\n') };
}

/**
 * Loads a world file: YAML front matter (name, tags, schema, entries, dimensions, characterSchema,
 * characters, seats, lorebook) and the lore as its body.
 * An unknown key anywhere is an error naming the file and the key's path.
 */
export function loadWorld(file: string): LoadedWorld {
  const { data, body } = splitFrontMatter(readFileSync(file, 'utf8'), file);
  const parsed = WorldManifest.safeParse(data);
  if (!parsed.success) throw new PluginManifestError(file, manifestIssues(parsed.error));
  return { ...parsed.data, ...splitWorldLore(body, file) };
}
