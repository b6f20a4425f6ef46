export * from './data-boundary';
export { primarySeat, currentCharacterOf, isPlayerControlled } from './seats';
export type { SeatLike, CharacterLike } from './seats';
export {
  characterSheetSegments,
  worldCharacterSheets,
  currentCharacterSummary,
  characterSheet,
  characterProfileLines,
  profileLine,
  fieldsWithRanges,
  cutText,
  PROFILE_FIELD_LIMIT,
  PROFILES_BUDGET,
} from './character-sheets';
export type { CharacterSheetSegment, CharacterSheetSegmentOptions, CharacterSheetWorld, CharacterSchemaLike, ProfileLinesOptions } from './character-sheets';
