export { WorldCreation } from './world-creation';
export { engineSharedPrompts, loadPromptFrom, SHARED_TEMPLATES } from './shared-prompts';
export type { LoadPrompt, SharedTemplate } from './shared-prompts';
export {
  CreateWorldInput,
  RepairLoreInput,
  worldGenerationRequest,
  loreRepairRequest,
  loreMarkerLines,
  MAX_WORLD_DESCRIPTION_CHARS,
  MAX_REPAIR_LORE_CHARS,
} from './requests';
export type { CreateWorldOptions, RepairLoreOptions, WorldCreationRequest } from './requests';
