/**
 * The extensions bag of a world made from a card (`extensions.card` of the world document): every
 * card field with no equivalent in a world, kept as it came so that exporting the world gives the
 * card back. Read again on export through this schema; a bag that does not match it (edited by
 * hand) is ignored, and the world is exported as one that never was a card.
 */
import { z } from 'zod';

/** The key of the bag in a world's `extensions`. */
export const CARD_EXTENSION_KEY = 'card';

const Json = z.record(z.string(), z.unknown());

/**
 * One entry of the card's `character_book`, in the card's order: an entry the world's lorebook
 * holds (by its id), with the entry's other fields (`rest`: all but `content` and
 * `insertion_order`, and `keys` only when blank keys were dropped), or an entry kept aside whole
 * (`kept`: disabled, empty, or with regular-expression keys; it never activates here).
 */
export const CardBagEntry = z.union([z.object({ lorebookId: z.string().min(1), rest: Json }).strict(), z.object({ kept: Json }).strict()]);

export const CardBag = z
  .object({
    /** The card's spec when it was imported. */
    spec: z.enum(['chara_card_v2', 'chara_card_v3']),
    /** The world character that is the card's character. */
    characterId: z.string().min(1),
    /**
     * The card's `data` fields with no world equivalent (`system_prompt`,
     * `post_history_instructions`, `creator`, `character_version`, `extensions`, V3's `assets`,
     * `creator_notes_multilingual`, `source`, `group_only_greetings`, `creation_date`,
     * `modification_date`, and fields the spec does not name).
     */
    data: Json,
    /** Values of mapped fields that the world keeps only in part (blank tags, empty greetings, a blank nickname, a scenario's outer space), as the card had them. */
    raw: z
      .object({
        tags: z.array(z.string()).optional(),
        first_mes: z.string().optional(),
        alternate_greetings: z.array(z.string()).optional(),
        nickname: z.string().nullable().optional(),
        /** The scenario as the card wrote it, when the world's lore normalises it (line breaks as `\n`, trimmed). */
        scenario: z.string().optional(),
      })
      .strict()
      .optional(),
    /** The card's `character_book` without its entries (name, description, scan_depth, token_budget, recursive_scanning, extensions). */
    book: Json.optional(),
    entries: z.array(CardBagEntry).default([]),
  })
  .strict();

export type CardBag = z.infer<typeof CardBag>;
export type CardBagEntry = z.infer<typeof CardBagEntry>;
