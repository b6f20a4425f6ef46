export * from './manifest';
export { loadPlugin, loadPlugins, loadPluginFolders, parsePluginFile, splitFrontMatter, manifestIssues, PluginManifestError } from './load-plugin';
export { parseRuntimeFile, DEFAULT_ENTRIES } from './load-plugin';
export type { ManifestIssue } from './load-plugin';
export {
  loadWorld,
  parseWorldFile,
  toLoadedWorld,
  splitWorldLore,
  narratorOnlyIssues,
  WorldDocument,
  WorldExtensions,
  WORLD_LIMITS,
  isNarratorOnlyMarker,
  NARRATOR_ONLY_OPEN,
  NARRATOR_ONLY_CLOSE,
  LoreEntry,
  LoreEntryExtra,
  WorldManifest,
  WorldCharacter,
} from './world';
export type { LoadedWorld, WorldDocumentInput } from './world';
export { PublishedCharacter, PublishedCharacters, MAX_PUBLISHED_CHARACTERS, withPublishedCharacters } from './session-characters';
export { canonicalLocaleTag, languageNameOf, promptLocaleOf, MAX_LOCALE_TAG_LENGTH } from './locale';
export {
  createPromptLoader,
  sharedPromptLoader,
  templateText,
  PromptLoaderOptions,
  PromptTemplateError,
  PROMPT_TEMPLATE_NAME,
  SHARED_PROMPTS_DIR,
} from './prompt-loader';
export type { PromptLoader, ResolvedPrompt, PromptTemplateErrorCode } from './prompt-loader';
export { JsonSchemaObject, CharacterBlueprint, CharacterSchema, CharacterSchemaProperty, WorldSeat, WorldDimension } from './world';
export { modelFacingJson, isBookkeepingValue, isBookkeepingKey, ModelFacingJsonError, MAX_MODEL_FACING_DEPTH } from './model-facing-json';
export { primarySeat, currentCharacterOf, isPlayerControlled } from '../data-boundary';
export type { SeatLike, CharacterLike } from '../data-boundary';
export {
  characterSheetSegments,
  worldCharacterSheets,
  characterSheet,
  characterProfileLines,
  profileLine,
  fieldsWithRanges,
  cutText,
  PROFILE_FIELD_LIMIT,
  PROFILES_BUDGET,
} from '../data-boundary';
export type { CharacterSheetSegment, CharacterSheetSegmentOptions, CharacterSheetWorld, CharacterSchemaLike, ProfileLinesOptions } from '../data-boundary';
export { rosterLines, foldKey, byCodeUnits, FOLDED_KEY_CODE_POINTS } from './roster';
export type { RosterLineOptions } from './roster';
export { clipLine } from './summary-line';
export { estimateTokens } from '../text';
export { evaluatePointer, JSON_POINTER_PATTERN } from './json-pointer';
export type { PointerResult } from './json-pointer';
export { createSchemaChecker, describeSchemaError } from './json-schema';
export type { SchemaChecker, SchemaVerdict } from './json-schema';
export * from './api';
