/**
 * Character sheets and profiles for prompts (spec §4): the JSON of `player.character` /
 * `<player-character>` and the line format of `characters.npcs` / `<character-profiles>`, one
 * implementation for both. Every value passes the data boundary (`modelFacingJson`) first.
 */
import { dataBlock, modelFacingJson } from './data-boundary';
import { type Locale, truncateText } from '../text';
import { type CharacterLike, currentCharacterOf, isPlayerControlled, primarySeat, type SeatLike } from './seats';

/** Code points kept of a profile's description, and of its fields' JSON. */
export const PROFILE_FIELD_LIMIT = 400;
/** About this many code points of full profile lines; the characters after them by name only. */
export const PROFILES_BUDGET = 8000;

/** The part of a character schema the helpers read: numeric ranges of top-level properties. */
export interface CharacterSchemaLike {
  readonly properties?: Readonly<Record<string, { readonly minimum?: number; readonly maximum?: number }>>;
}

/** A prompt segment as `prompt.segment@1` returns it (the host adds `providerPluginId`). */
export interface CharacterSheetSegment {
  id: 'player-character' | 'character-profiles';
  content: string;
  position: 'system';
  volatility: 'turn';
  audience?: 'self' | 'story' | { contract: string };
}

export interface ProfileLinesOptions {
  locale: Locale;
  /** Left out (the current character). */
  excludeId?: string;
  /** Seated characters carry `[player]`. */
  seats?: readonly SeatLike[];
  schema?: CharacterSchemaLike;
  /** Default {@link PROFILES_BUDGET}. */
  budget?: number;
}

export interface CharacterSheetSegmentOptions {
  /** The character the player plays now: `<player-character>` only with it. */
  currentCharacterId?: string;
  /** Adds `<character-profiles>` (every other character). */
  profiles?: boolean;
  /** The language of the "profiles not listed" line: the body's. */
  locale: Locale;
  /** Numeric fields whose property declares minimum and maximum read `"2/5"`. */
  schema?: CharacterSchemaLike;
  /** Characters seated here (besides type `player`) carry `[player]` in the profiles. */
  seats?: readonly SeatLike[];
  audience?: CharacterSheetSegment['audience'];
}

const notListed: Record<Locale, (names: string[]) => string> = {
  en: (names) => `Profiles not listed (look them up by name or alias with get-character): ${names.join(', ')}`,
  'zh-Hans': (names) => `未列出档案的角色（用 get-character 按名字或别名查询）：${names.join('、')}`,
};

const oneLine = (text: string) => text.replace(/\s*[\r\n\u2028\u2029]+\s*/g, ' ').trim();

/** At most `limit` code points, cut on a grapheme boundary, `…` marking a cut. */
export function cutText(text: string, limit: number): string {
  const cut = truncateText(text, limit);
  return cut === text ? text : `${truncateText(text, limit - 1)}…`;
}

const ownProperty = (schema: CharacterSchemaLike | undefined, key: string) =>
  schema?.properties && Object.hasOwn(schema.properties, key) ? schema.properties[key] : undefined;

/** A character's fields, numbers with a declared minimum and maximum as `"value/maximum"`. */
export function fieldsWithRanges(fields: Readonly<Record<string, unknown>> | undefined, schema?: CharacterSchemaLike): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields ?? {})) {
    const property = ownProperty(schema, key);
    const ranged = typeof value === 'number' && typeof property?.minimum === 'number' && typeof property.maximum === 'number';
    Object.defineProperty(out, key, { value: ranged ? `${value}/${property.maximum}` : value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** The sheet of one character, through the data boundary: `player.character` and `<player-character>`. */
export function characterSheet(character: CharacterLike, schema?: CharacterSchemaLike): Record<string, unknown> {
  return modelFacingJson({
    id: character.id,
    name: character.name,
    ...(character.aliases?.length ? { aliases: character.aliases } : {}),
    type: character.type ?? 'npc',
    description: character.description ?? '',
    fields: fieldsWithRanges(character.fields, schema),
  }) as Record<string, unknown>;
}

/** One profile line: `name (aka a, b) [type] | description | fields` (no id). */
export function profileLine(character: CharacterLike, options: Pick<ProfileLinesOptions, 'seats' | 'schema'> = {}): string {
  const aliases = (character.aliases ?? []).map((a) => cutText(oneLine(a), PROFILE_FIELD_LIMIT));
  const type = oneLine(character.type ?? 'npc');
  let head = `${cutText(oneLine(character.name), PROFILE_FIELD_LIMIT)}${aliases.length ? ` (aka ${aliases.join(', ')})` : ''} [${type}]`;
  if (type !== 'player' && isPlayerControlled(character, options.seats)) head += ' [player]';
  const description = cutText(oneLine(character.description ?? ''), PROFILE_FIELD_LIMIT);
  const fields = modelFacingJson(fieldsWithRanges(character.fields, options.schema)) as Record<string, unknown>;
  const parts = [head];
  if (description || Object.keys(fields).length) parts.push(description);
  if (Object.keys(fields).length) parts.push(cutText(JSON.stringify(fields), PROFILE_FIELD_LIMIT));
  return parts.join(' | ');
}

/**
 * Profile lines of every character but `excludeId`, in the given order, while they fit the
 * budget (code points, newlines included); the rest by name, on one localized line.
 */
export function characterProfileLines(characters: readonly CharacterLike[], options: ProfileLinesOptions): string {
  const budget = options.budget ?? PROFILES_BUDGET;
  const lines: string[] = [];
  const namesOnly: string[] = [];
  let used = 0;
  for (const character of characters) {
    if (character.id === options.excludeId) continue;
    if (namesOnly.length === 0) {
      const line = profileLine(character, options);
      const size = [...line].length + (lines.length ? 1 : 0);
      if (used + size <= budget) {
        lines.push(line);
        used += size;
        continue;
      }
    }
    namesOnly.push(cutText(oneLine(character.name), PROFILE_FIELD_LIMIT));
  }
  if (namesOnly.length) lines.push(notListed[options.locale](namesOnly));
  return lines.join('\n');
}

/**
 * `prompt.segment@1` turn segments for character sheets (spec §4 "Writing that keeps the system
 * prompt unchanged"): `<player-character>` (the current character's sheet, the same JSON as
 * `{{ player.character }}`, only with `currentCharacterId`) and, with `profiles: true`,
 * `<character-profiles>` (the same lines as `{{ characters.npcs }}`, without the current
 * character). Contents are XML-escaped data.
 */
export function characterSheetSegments(characters: readonly CharacterLike[], options: CharacterSheetSegmentOptions): CharacterSheetSegment[] {
  const base = { position: 'system' as const, volatility: 'turn' as const, ...(options.audience !== undefined ? { audience: options.audience } : {}) };
  const segments: CharacterSheetSegment[] = [];
  const current = options.currentCharacterId === undefined ? undefined : characters.find((c) => c.id === options.currentCharacterId);
  if (current)
    segments.push({ id: 'player-character', content: dataBlock('player-character', JSON.stringify(characterSheet(current, options.schema))), ...base });
  if (options.profiles) {
    const lines = characterProfileLines(characters, {
      locale: options.locale,
      excludeId: options.currentCharacterId,
      seats: options.seats,
      schema: options.schema,
    });
    if (lines) segments.push({ id: 'character-profiles', content: dataBlock('character-profiles', lines), ...base });
  }
  return segments;
}

/** The part of a session's world `worldCharacterSheets` reads. */
export interface CharacterSheetWorld {
  readonly characters: readonly CharacterLike[];
  readonly seats: readonly SeatLike[];
  readonly characterSchema?: CharacterSchemaLike;
}

/**
 * A story runtime's character sheets (spec §4 "Writing that keeps the system prompt unchanged"):
 * `characterSheetSegments` for the character the primary seat plays, with every other character's
 * profile, the world's schema and seats. The body only names `<player-character>` and
 * `<character-profiles>`; their content comes as turn segments, so the system prompt stays
 * byte-identical while the characters change. None without a world.
 */
export function worldCharacterSheets(
  world: CharacterSheetWorld | null,
  options: { locale: Locale; audience?: CharacterSheetSegment['audience'] },
): CharacterSheetSegment[] {
  if (!world) return [];
  const current = currentCharacterOf(primarySeat(world.seats), world.characters, world.seats);
  return characterSheetSegments(world.characters, {
    currentCharacterId: current?.id,
    profiles: true,
    locale: options.locale,
    schema: world.characterSchema,
    seats: world.seats,
    ...(options.audience !== undefined ? { audience: options.audience } : {}),
  });
}

/**
 * The character summary `PostContextAssembly` hooks get as a read-only source (spec §3): the sheet
 * of the character the primary seat plays — the same JSON as `{{ player.character }}` and
 * `<player-character>` (spec §4) — or '' without a world or a played character.
 */
export function currentCharacterSummary(world: CharacterSheetWorld | null): string {
  if (!world) return '';
  const current = currentCharacterOf(primarySeat(world.seats), world.characters, world.seats);
  return current ? JSON.stringify(characterSheet(current, world.characterSchema)) : '';
}
