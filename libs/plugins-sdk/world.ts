import { readFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { z } from 'zod';
import { codePointLength, isWellFormedText } from '../text';
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

/** The limits of a world document (`POST /v1/worlds` answers 400 naming the limit past one). */
export const WORLD_LIMITS = {
  /** Code points of the lore body. */
  loreChars: 200_000,
  characters: 200,
  lorebookEntries: 5_000,
  openings: 32,
  /** Code points of one opening. */
  openingChars: 20_000,
  /** Bytes of the whole document as JSON (UTF-8). */
  documentBytes: 4 * 1024 * 1024,
} as const;

/** Fields of a world that have no equivalent here, kept as they came (e.g. a character card's own fields). */
export const WorldExtensions = z.record(z.string(), z.unknown());

const WORLD_ID = /^[a-z][a-z0-9-]*$/;

/** Every field of a world but its id (the file's folder, or the id the engine gives a tenant's world) and its lore body. */
const worldShape = {
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
  characters: z.array(WorldCharacter).max(WORLD_LIMITS.characters).default([]),
  seats: z.array(WorldSeat).default([]),
  lorebook: z.array(LoreEntry).max(WORLD_LIMITS.lorebookEntries).default([]),
  /**
   * The plugins a session in this world runs (plugin ids); without it, the plugins enabled by
   * default (a manifest's `enabledByDefault`). `POST /v1/sessions` `plugins` overrides it.
   */
  plugins: z
    .array(z.string().regex(/^[a-z][a-z0-9-]*$/))
    .refine((ids) => new Set(ids).size === ids.length, 'must name each plugin once (a plugin id is listed twice)')
    .optional(),
  /** The world's configuration for plugins, keyed by plugin id (e.g. `memory`'s initial blocks); each plugin reads its own. */
  pluginConfig: z.record(z.string(), z.record(z.string(), z.unknown())).default({}),
  /**
   * The scenes a session may open with (a character card's greetings): `POST /v1/sessions`
   * `opening` picks one by index, committed as turn 0's story message.
   */
  openings: z
    .array(
      z
        .string()
        .min(1)
        .refine((s) => codePointLength(s) <= WORLD_LIMITS.openingChars, `must be at most ${WORLD_LIMITS.openingChars} characters`),
    )
    .max(WORLD_LIMITS.openings)
    .optional(),
  /** Fields with no equivalent in a world (an imported card's), kept for export. */
  extensions: WorldExtensions.optional(),
};

type WorldShape = z.infer<z.ZodObject<typeof worldShape>>;

/** The checks across fields: ids unique, seats naming characters, a character's fields in their declared range. */
function checkWorld(world: WorldShape, ctx: z.RefinementCtx): void {
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
}

/** A WORLD.md file's front matter: the world's fields and its id. */
export const WorldManifest = z
  .object({ id: z.string().regex(WORLD_ID), ...worldShape })
  .strict()
  .superRefine(checkWorld);

/**
 * A world document: what a WORLD.md folder holds (its front matter without the id, and the lore
 * body as `lore`, narrator-only marker lines included) and what `POST /v1/worlds` takes — one
 * schema for both. Every string must be well-formed Unicode without NUL; past a limit of
 * {@link WORLD_LIMITS} the error names the limit.
 */
export const WorldDocument = z
  .object({
    ...worldShape,
    /**
     * The lore body, as written (narrator-only parts between their marker lines), normalised the
     * way a WORLD.md body is read: line breaks as `\n` (a `\r\n` or a lone `\r` becomes `\n`, as
     * YAML does in the front matter's strings), then trimmed (`String.prototype.trim`: the loader
     * drops the blank lines and spaces around a file's body). So a document written out as a
     * WORLD.md and read back is the same document, whatever the checkout's line endings.
     */
    lore: z
      .string()
      .overwrite((s) => s.replace(/\r\n?/g, '\n'))
      .trim()
      .refine((s) => codePointLength(s) <= WORLD_LIMITS.loreChars, `must be at most ${WORLD_LIMITS.loreChars} characters`)
      .default(''),
  })
  .strict()
  .superRefine((world, ctx) => {
    checkWorld(world, ctx);
    for (const issue of narratorOnlyIssues(world.lore)) ctx.addIssue({ code: 'custom', path: ['lore'], message: `line ${issue.line}: ${issue.message}` });
    addMalformedTextIssues(world, ctx);
  });

/** One issue per string (key included) of `value` that holds a lone surrogate or U+0000, at its path. */
export function addMalformedTextIssues(value: unknown, ctx: z.RefinementCtx): void {
  for (const path of badStrings(value))
    ctx.addIssue({ code: 'custom', path, message: 'must be well-formed Unicode without NUL (found a lone surrogate or U+0000)' });
}

/** At most this many malformed strings are reported for one value (the rest are refused with them). */
const MALFORMED_REPORTED = 20;

/**
 * Paths of the strings (keys included) in a JSON-like value that hold a lone surrogate or NUL, at
 * most `MALFORMED_REPORTED`. Walked with a stack of its own, each object once: a plugin's result
 * may nest deeper than the call stack or refer to itself (its JSON check refuses that later).
 */
function badStrings(root: unknown): (string | number)[][] {
  const bad = (s: string) => !isWellFormedText(s) || s.includes('\u0000');
  interface Step {
    value: unknown;
    key: string | number | null;
    parent: Step | null;
  }
  const pathOf = (step: Step, last?: string): (string | number)[] => {
    const path: (string | number)[] = last === undefined ? [] : [last];
    for (let at: Step | null = step; at && at.key !== null; at = at.parent) path.unshift(at.key);
    return path;
  };
  const found: (string | number)[][] = [];
  const seen = new WeakSet<object>();
  const stack: Step[] = [{ value: root, key: null, parent: null }];
  while (stack.length && found.length < MALFORMED_REPORTED) {
    const step = stack.pop()!;
    const { value } = step;
    if (typeof value === 'string') {
      if (bad(value)) found.push(pathOf(step));
      continue;
    }
    if (value === null || typeof value !== 'object' || seen.has(value)) continue;
    seen.add(value);
    const entries: [string | number, unknown][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
    // pushed last first: reported in the value's own order
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      if (typeof key === 'string' && bad(key)) found.push(pathOf(step, key));
      else stack.push({ value: child, key, parent: step });
    }
  }
  return found;
}

export type LoreEntry = z.infer<typeof LoreEntry>;
export type WorldCharacter = z.infer<typeof WorldCharacter>;
export type CharacterBlueprint = z.infer<typeof CharacterBlueprint>;
export type WorldSeat = z.infer<typeof WorldSeat>;
export type WorldDimension = z.infer<typeof WorldDimension>;
export type CharacterSchema = z.infer<typeof CharacterSchema>;
export type WorldManifest = z.infer<typeof WorldManifest>;
export type WorldDocument = z.infer<typeof WorldDocument>;
export type WorldDocumentInput = z.input<typeof WorldDocument>;
export interface LoadedWorld extends Omit<WorldDocument, 'lore'> {
  /** The file's id (its front matter's, or its folder's), or the id the engine gave a tenant's world. */
  id: string;
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

/** True for a narrator-only marker line (the opening or the closing fence; spaces around allowed). */
export const isNarratorOnlyMarker = (line: string): boolean => line.trim() === NARRATOR_ONLY_OPEN || line.trim() === NARRATOR_ONLY_CLOSE;

/** What is wrong with a body's narrator-only markers (an unclosed, unopened or nested part), by body line; none: fine. */
export function narratorOnlyIssues(body: string): { line: number; message: string }[] {
  const issues: { line: number; message: string }[] = [];
  let openedAt: number | null = null;
  body.split('\n').forEach((line, i) => {
    const marker = line.trim();
    if (marker === NARRATOR_ONLY_OPEN) {
      if (openedAt !== null) issues.push({ line: i + 1, message: `${NARRATOR_ONLY_OPEN} inside the narrator-only part opened at body line ${openedAt}` });
      else openedAt = i + 1;
    } else if (marker === NARRATOR_ONLY_CLOSE) {
      if (openedAt === null) issues.push({ line: i + 1, message: `${NARRATOR_ONLY_CLOSE} without an opening ${NARRATOR_ONLY_OPEN}` });
      openedAt = null;
    }
  });
  if (openedAt !== null) issues.push({ line: openedAt, message: `${NARRATOR_ONLY_OPEN} is never closed by ${NARRATOR_ONLY_CLOSE}` });
  return issues;
}

/**
 * Splits a world's body at its narrator-only markers: `lore` keeps every line but the markers,
 * `sharedLore` also leaves out the lines between them. A marker is a line holding only the marker
 * (spaces around allowed); an unclosed, unopened or nested part is an error naming the line.
 */
export function splitWorldLore(body: string, file: string): { lore: string; sharedLore: string } {
  const [issue] = narratorOnlyIssues(body);
  if (issue) throw new PluginManifestError(file, [{ path: `body line ${issue.line}`, message: issue.message }]);
  const lore: string[] = [];
  const shared: string[] = [];
  let open = false;
  for (const line of body.split('\n')) {
    const marker = line.trim();
    if (marker === NARRATOR_ONLY_OPEN) open = true;
    else if (marker === NARRATOR_ONLY_CLOSE) open = false;
    else {
      lore.push(line);
      if (!open) shared.push(line);
    }
  }
  return { lore: lore.join('\n'), sharedLore: shared.join('\n') };
}

/** A valid world document as the engine runs it, under `id`: the lore split at its narrator-only parts. */
export function toLoadedWorld(id: string, document: WorldDocument): LoadedWorld {
  const { lore, ...rest } = document;
  return { id, ...rest, ...splitWorldLore(lore, id) };
}

/**
 * Parses the text of a WORLD.md file into its id (the front matter's `id`, else `fallbackId`, the
 * folder's name) and its document: the front matter without the id, the body as `lore`. Errors
 * name the file and the field's path.
 */
export function parseWorldFile(text: string, file: string, fallbackId?: string): { id: string; document: WorldDocument } {
  const { data, body } = splitFrontMatter(text, file);
  const { id = fallbackId, ...front } = (data !== null && typeof data === 'object' && !Array.isArray(data) ? data : {}) as Record<string, unknown>;
  if (typeof id !== 'string' || !WORLD_ID.test(id))
    throw new PluginManifestError(file, [{ path: 'id', message: 'must be lowercase letters, digits and dashes, starting with a letter' }]);
  const parsed = WorldDocument.safeParse({ ...front, lore: body });
  if (!parsed.success) throw new PluginManifestError(file, manifestIssues(parsed.error));
  return { id, document: parsed.data };
}

/**
 * Loads a world file: YAML front matter (name, tags, schema, entries, dimensions, characterSchema,
 * characters, seats, lorebook, openings) and the lore as its body.
 * An unknown key anywhere is an error naming the file and the key's path.
 */
export function loadWorld(file: string): LoadedWorld {
  const { id, document } = parseWorldFile(readFileSync(file, 'utf8'), file, basename(dirname(file)));
  return toLoadedWorld(id, document);
}
