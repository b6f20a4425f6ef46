import type { PromptLoader } from '../../plugins-sdk';
import { type CreateWorldOptions, loreRepairRequest, type RepairLoreOptions, type WorldCreationRequest, worldGenerationRequest } from './requests';
import { loadPromptFrom } from './shared-prompts';

/**
 * The engine's side of world creation (spec §6): the requests it sends, from the shared templates
 * of the engine's prompt root (`COVEL_PROMPTS_DIR`, else `prompts/server`) unless the caller
 * injects its own loader (`loadPrompt`).
 */
export class WorldCreation {
  constructor(private readonly options: { prompts: PromptLoader }) {}

  /** The shared loader this engine reads the templates with (its root: `config.promptsDir`). */
  get prompts(): PromptLoader {
    return this.options.prompts;
  }

  generationRequest(options: CreateWorldOptions): WorldCreationRequest {
    return worldGenerationRequest({ ...options, loadPrompt: options.loadPrompt ?? loadPromptFrom(this.options.prompts) });
  }

  loreRepairRequest(options: RepairLoreOptions): WorldCreationRequest {
    return loreRepairRequest({ ...options, loadPrompt: options.loadPrompt ?? loadPromptFrom(this.options.prompts) });
  }
}
