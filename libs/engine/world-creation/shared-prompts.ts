import { type PromptLoader, sharedPromptLoader } from '../../plugins-sdk';

/** The framework's shared templates (spec §6): what the shared prompt root (`prompts/server`, or `COVEL_PROMPTS_DIR`) holds. */
export const SHARED_TEMPLATES = ['world-generation', 'lore-repair'] as const;
export type SharedTemplate = (typeof SHARED_TEMPLATES)[number];

/**
 * How world creation gets a shared template's text for a locale (`CreateWorldOptions.loadPrompt`,
 * spec §6): the host's loader. It returns the text (its documentation comment removed) or throws
 * when there is none; filling the `{{ variables }}` is world creation's job.
 */
export type LoadPrompt = (name: SharedTemplate, locale: string) => string;

/**
 * The engine's shared loader over `root` (`config.promptsDir`: `COVEL_PROMPTS_DIR`, else the
 * repository's `prompts/server`), checked at start-up: every shared template must have a file the
 * fallback ends on (`<name>.en.md` or the default `<name>.md`) in that root. The root replaces the
 * repository's: nothing is looked up there again, so a root missing a template stops start-up with
 * a `PromptTemplateError` naming the template and the paths tried (a root that is not a readable
 * directory: `PROMPT_ROOT_INVALID`), instead of failing the first world created.
 */
export function engineSharedPrompts(root: string): PromptLoader {
  const loader = sharedPromptLoader({ root });
  for (const name of SHARED_TEMPLATES) loader.loadOrThrow(name, null);
  return loader;
}

/** A loader as a `LoadPrompt`: the text for the locale by the loader's fallback, or its `PromptTemplateError`. */
export function loadPromptFrom(loader: PromptLoader): LoadPrompt {
  return (name, locale) => loader.loadOrThrow(name, locale);
}
