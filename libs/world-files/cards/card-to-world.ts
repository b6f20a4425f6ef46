/**
 * A card as a world document (the mapping is listed in docs/worlds.md, "Character cards"):
 *
 * - the card's character → the world's one character: id from the name (`characterIdOf`), type
 *   `npc`, `description`, `blueprint.personality` ← `personality`, `blueprint.sampleLines` ←
 *   `[mes_example]` (the roleplay notes), `aliases` ← V3 `nickname`;
 * - world `name` ← `name`, `description` ← `creator_notes` (never part of a story prompt, as the
 *   card spec asks), `tags` ← `tags` (blank ones dropped), `lore` ← `scenario`;
 * - `openings` ← `first_mes`, then `alternate_greetings` (empty ones dropped);
 * - `lorebook` ← `character_book.entries` (see entries.ts);
 * - everything else → `extensions.card` (bag.ts), so that export gives it back.
 *
 * Card text is data: `{{char}}`, `{{user}}` and any `{{ … }}` are kept verbatim. The engine renders
 * `{{ … }}` in a runtime's own body, never in a value (libs/context/template.ts); an opening alone is
 * rendered once at session start, and a token naming no variable stays as written there.
 */
import type { WorldDocumentInput } from '../../plugins-sdk';
import { CARD_EXTENSION_KEY, type CardBag } from './bag';
import { characterIdOf } from './character-id';
import { cardBookToLorebook } from './entries';
import type { CharacterCard } from './schema';

const isBlank = (s: string) => s.trim() === '';

/** Card data fields the world holds itself (everything else goes to the bag). */
const MAPPED_FIELDS = new Set([
  'name',
  'description',
  'personality',
  'scenario',
  'first_mes',
  'mes_example',
  'creator_notes',
  'alternate_greetings',
  'tags',
  'character_book',
  'nickname',
]);

/** The card's greetings as openings: `first_mes` first, empty ones dropped. */
export const greetingsOf = (firstMes: string, alternates: readonly string[]): string[] => [firstMes, ...alternates].filter((g) => g !== '');

export function cardToWorld(card: CharacterCard): WorldDocumentInput {
  const d = card.data;
  const nickname = card.spec === 'chara_card_v3' ? card.data.nickname : undefined;
  const characterId = characterIdOf(d.name);
  const blueprint = {
    ...(d.personality !== '' ? { personality: d.personality } : {}),
    ...(d.mes_example !== '' ? { sampleLines: [d.mes_example] } : {}),
  };
  const { lorebook, bag: entries } = cardBookToLorebook(d.character_book);
  const openings = greetingsOf(d.first_mes, d.alternate_greetings);
  const tags = d.tags.filter((t) => !isBlank(t));
  const alias = typeof nickname === 'string' && !isBlank(nickname) ? nickname : undefined;

  const raw: NonNullable<CardBag['raw']> = {};
  if (tags.length !== d.tags.length) raw.tags = d.tags;
  if (openings.length !== d.alternate_greetings.length + 1) Object.assign(raw, { first_mes: d.first_mes, alternate_greetings: d.alternate_greetings });
  if (nickname !== undefined && alias === undefined) raw.nickname = nickname;
  if (normalLore(d.scenario) !== d.scenario) raw.scenario = d.scenario;

  const { entries: _entries, ...book } = d.character_book ?? {};
  const bag: CardBag = {
    spec: card.spec,
    characterId,
    data: Object.fromEntries(Object.entries(d).filter(([key]) => !MAPPED_FIELDS.has(key))),
    ...(Object.keys(raw).length ? { raw } : {}),
    ...(d.character_book ? { book } : {}),
    entries,
  };
  return {
    name: d.name,
    description: d.creator_notes,
    tags,
    characters: [
      {
        id: characterId,
        name: d.name,
        aliases: alias !== undefined ? [alias] : [],
        type: 'npc',
        description: d.description,
        ...(Object.keys(blueprint).length ? { blueprint } : {}),
      },
    ],
    lorebook,
    ...(openings.length ? { openings } : {}),
    lore: d.scenario,
    extensions: { [CARD_EXTENSION_KEY]: bag },
  };
}

/** A lore as the world document keeps it (`WorldDocument.lore`): line breaks as `\n`, trimmed. */
export const normalLore = (text: string): string => text.replace(/\r\n?/g, '\n').trim();
