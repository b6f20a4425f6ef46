// A world's folder (WORLD.md) as a zip: written, read back (docs/worlds.md, "Export and import of a world folder")
export { worldMarkdown, exportWorldArchive, importWorldArchive, isWorldId, WORLD_ARCHIVE_LIMITS } from './folder';
export type { WorldMarkdownOptions, ExportWorldArchiveOptions, ImportWorldArchiveResult, WorldArchiveErrorCode, WorldArchiveLimits } from './folder';
// Character cards (V2/V3, JSON and PNG): read, map to a world document and back (docs/worlds.md, "Character cards")
export { parseCard, CARD_LIMITS } from './cards/parse-card';
export type { ParseCardOptions } from './cards/parse-card';
export { cardToWorld } from './cards/card-to-world';
export { worldToCard, V2_BACKFILL_NOTE } from './cards/world-to-card';
export type { CardFormat, WorldToCardOptions, WorldToCardResult } from './cards/world-to-card';
export { CARD_ERROR_CATEGORY } from './cards/result';
export type { CardErrorCode, CardIssue, ParseCardResult } from './cards/result';
export { CharacterCardV2, CharacterCardV3, CardLoreEntry, CardCharacterBook } from './cards/schema';
export type { CharacterCard } from './cards/schema';
export { CardBag, CARD_EXTENSION_KEY } from './cards/bag';
export { characterIdOf } from './cards/character-id';
