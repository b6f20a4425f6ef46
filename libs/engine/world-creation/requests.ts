import { z } from 'zod';
import { renderTemplate } from '../../context';
import { InvalidInputError } from '../../errors';
import { canonicalLocaleTag, MAX_LOCALE_TAG_LENGTH, isNarratorOnlyMarker, promptLocaleOf } from '../../plugins-sdk';
import { codePointLength, isWellFormedText } from '../../text';
import type { LoadPrompt, SharedTemplate } from './shared-prompts';

/** Most characters (code points) of an author's description of the world to create. */
export const MAX_WORLD_DESCRIPTION_CHARS = 16_000;
/** Most characters of a lore sent to repair. */
export const MAX_REPAIR_LORE_CHARS = 200_000;

/** Text of at most `max` code points with no lone surrogate. */
const text = (max: number) =>
  z
    .string()
    .refine(isWellFormedText, 'must be well-formed Unicode (no lone surrogate)')
    .refine((s) => codePointLength(s) <= max, `must be at most ${max} characters`);

/** Any well-formed BCP 47 tag, in its canonical form. */
const Locale = z
  .string()
  .max(MAX_LOCALE_TAG_LENGTH)
  .transform((tag, ctx) => {
    const canonical = canonicalLocaleTag(tag);
    if (canonical !== null) return canonical;
    ctx.addIssue({ code: 'custom', message: 'must be a well-formed BCP 47 language tag, e.g. en, pt-BR, zh-Hans' });
    return z.NEVER;
  });

const maxLoreChars = z.int().min(500).max(MAX_REPAIR_LORE_CHARS).default(12_000);

/** What a world is created from (the data of {@link CreateWorldOptions}; zod at the boundary). */
export const CreateWorldInput = z
  .object({
    /** The author's idea for the world, as written (may be empty: the model invents one). */
    description: text(MAX_WORLD_DESCRIPTION_CHARS),
    /** The language of the world's text; the template's language follows it (spec §6 fallback). */
    locale: Locale,
    /** The most characters the world may have. */
    maxCharacters: z.int().min(1).max(64).default(8),
    /** The longest the lore may be, in characters. */
    maxLoreChars,
  })
  .strict();

/**
 * World creation's options (spec §6): the input above, and `loadPrompt`, the host's loader of the
 * shared templates (absent: the engine's, over `COVEL_PROMPTS_DIR` or `prompts/server`).
 */
export type CreateWorldOptions = z.input<typeof CreateWorldInput> & { loadPrompt?: LoadPrompt };

/** A world's lore to repair, with what a check found wrong (the data of {@link RepairLoreOptions}). */
export const RepairLoreInput = z
  .object({
    world: z
      .object({
        name: text(200),
        description: text(2_000),
        /** The whole lore body, marker lines included. */
        lore: text(MAX_REPAIR_LORE_CHARS),
        characters: z
          .array(z.object({ name: text(200), type: z.enum(['player', 'npc']), description: text(4_000) }).strict())
          .max(200)
          .default([]),
      })
      .strict(),
    /** One problem a line; none asks for a general consistency pass. */
    problems: z.array(text(2_000)).max(200).default([]),
    locale: Locale,
    maxLoreChars,
  })
  .strict();

export type RepairLoreOptions = z.input<typeof RepairLoreInput> & { loadPrompt?: LoadPrompt };

/** One model request of world creation: the rendered template as the system prompt, and the user message. */
export interface WorldCreationRequest {
  template: SharedTemplate;
  /** The canonical locale the template was asked for. */
  locale: string;
  system: string;
  user: string;
}

/** The user messages code writes, in the instruction language (spec §6: en, or zh-Hans for Simplified Chinese). */
const USER_TEXT = {
  en: { create: 'Create a world.', repair: 'Repair the lore.' },
  'zh-Hans': { create: '创建一个世界。', repair: '修复设定。' },
} as const;

function parse<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new InvalidInputError(parsed.error.issues.map((i) => ({ path: i.path.join('.') || '(options)', message: i.message })));
  return parsed.data;
}

/**
 * The world-generation request (spec §6): the `world-generation` template for the locale (through
 * `loadPrompt`) with its variables filled — the description inside `<world-brief>` is XML-escaped
 * there, so it stays data — and the description as the user message.
 */
export function worldGenerationRequest(options: CreateWorldOptions & { loadPrompt: LoadPrompt }): WorldCreationRequest {
  const { loadPrompt, ...rest } = options;
  const input = parse(CreateWorldInput, rest);
  const template = loadPrompt('world-generation', input.locale);
  const system = renderTemplate(template, {
    brief: input.description,
    language: input.locale,
    maxCharacters: input.maxCharacters,
    maxLoreChars: input.maxLoreChars,
  });
  const user = input.description.trim() === '' ? USER_TEXT[promptLocaleOf(input.locale)].create : input.description;
  return { template: 'world-generation', locale: input.locale, system, user };
}

/** The lines of a lore that are marker lines (the narrator-only fences), in order, as written. */
export function loreMarkerLines(lore: string): string[] {
  return lore.split(/\r?\n/).filter(isNarratorOnlyMarker);
}

/** The lore-repair request (spec §6): the `lore-repair` template for the locale with the world, its marker lines and the problems filled in. */
export function loreRepairRequest(options: RepairLoreOptions & { loadPrompt: LoadPrompt }): WorldCreationRequest {
  const { loadPrompt, ...rest } = options;
  const input = parse(RepairLoreInput, rest);
  const template = loadPrompt('lore-repair', input.locale);
  const system = renderTemplate(template, {
    world: { name: input.world.name, description: input.world.description, lore: input.world.lore },
    characters: input.world.characters.map((c) => `${c.name} [${c.type}] | ${c.description}`).join('\n'),
    markers: loreMarkerLines(input.world.lore).join('\n'),
    problems: input.problems.join('\n'),
    language: input.locale,
    maxLoreChars: input.maxLoreChars,
  });
  return { template: 'lore-repair', locale: input.locale, system, user: USER_TEXT[promptLocaleOf(input.locale)].repair };
}
