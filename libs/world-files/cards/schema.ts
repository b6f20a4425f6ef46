/**
 * Character Card V2 (`chara_card_v2`, github.com/malfoyslastname/character-card-spec-v2) and V3
 * (`chara_card_v3`, github.com/kwaroran/character-card-spec-v3) as zod schemas. Types are strict
 * (a string is a string, an entry's `insertion_order` an integer); presence is lenient, as real
 * cards are: a missing or `null` text field reads as `''`, a missing list as `[]`, a missing
 * `extensions` as `{}`; an optional field may be absent or `null`. A card's data, its lorebook and
 * each entry keep fields the spec does not name (they are exported again); top-level keys other
 * than `spec`, `spec_version` and `data` (the V1 mirror SillyTavern writes) are dropped.
 */
import { z } from 'zod';

/** An `extensions` object: any JSON, kept as it came. */
export const CardExtensionsObject = z.record(z.string(), z.unknown());

const text = z
  .string()
  .nullish()
  .transform((v) => v ?? '');
const texts = z
  .array(z.string())
  .nullish()
  .transform((v) => v ?? []);
const extensions = CardExtensionsObject.nullish().transform((v) => v ?? {});

/** One entry of a card's `character_book` (V2 fields, and V3's `use_regex`, `case_sensitive`). */
export const CardLoreEntry = z.looseObject({
  keys: texts,
  content: text,
  extensions,
  enabled: z
    .boolean()
    .nullish()
    .transform((v) => v ?? true),
  insertion_order: z
    .number()
    .int()
    .nullish()
    .transform((v) => v ?? 0),
  case_sensitive: z.boolean().nullish(),
  /** V3: `keys` are regular expressions. */
  use_regex: z.boolean().nullish(),
  constant: z.boolean().nullish(),
  name: z.string().nullish(),
  priority: z.number().nullish(),
  id: z.union([z.number(), z.string()]).nullish(),
  comment: z.string().nullish(),
  selective: z.boolean().nullish(),
  secondary_keys: z.array(z.string()).nullish(),
  position: z.enum(['before_char', 'after_char']).nullish(),
});

/** A card's `character_book`. */
export const CardCharacterBook = z.looseObject({
  name: z.string().nullish(),
  description: z.string().nullish(),
  scan_depth: z.number().nullish(),
  token_budget: z.number().nullish(),
  recursive_scanning: z.boolean().nullish(),
  extensions,
  entries: z
    .array(CardLoreEntry)
    .nullish()
    .transform((v) => v ?? []),
});

const v2DataShape = {
  name: z.string(),
  description: text,
  personality: text,
  scenario: text,
  first_mes: text,
  mes_example: text,
  creator_notes: text,
  system_prompt: text,
  post_history_instructions: text,
  alternate_greetings: texts,
  character_book: CardCharacterBook.nullish(),
  tags: texts,
  creator: text,
  character_version: text,
  extensions,
};

/** A V3 asset (`{ type, uri, name, ext }`); `name` and `ext` default to `''`. */
export const CardAsset = z.looseObject({ type: z.string(), uri: z.string(), name: text, ext: text });

export const CharacterCardV2 = z.object({
  spec: z.literal('chara_card_v2'),
  /** Cards written before the spec's May 8th addition have none. */
  spec_version: z.literal('2.0').optional(),
  data: z.looseObject(v2DataShape),
});

export const CharacterCardV3 = z.object({
  spec: z.literal('chara_card_v3'),
  /** `3.0`, or a later version (read as 3.0: the spec asks importers not to reject newer cards). */
  spec_version: z.string(),
  data: z.looseObject({
    ...v2DataShape,
    assets: z.array(CardAsset).nullish(),
    nickname: z.string().nullish(),
    creator_notes_multilingual: z.record(z.string(), z.string()).nullish(),
    source: z.array(z.string()).nullish(),
    group_only_greetings: texts,
    creation_date: z.number().nullish(),
    modification_date: z.number().nullish(),
  }),
});

export type CharacterCardV2 = z.output<typeof CharacterCardV2>;
export type CharacterCardV3 = z.output<typeof CharacterCardV3>;
export type CharacterCard = CharacterCardV2 | CharacterCardV3;
export type CardLoreEntry = z.output<typeof CardLoreEntry>;
export type CardCharacterBook = z.output<typeof CardCharacterBook>;
