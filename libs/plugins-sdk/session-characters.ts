import { z } from 'zod';
import { addMalformedTextIssues, type WorldCharacter } from './world';

/**
 * A character as a `session.world-context@1` provider publishes it: the character as it is now in
 * the session (a character-keeping plugin's record). `id` names the world's character it stands
 * for, or a character the story introduced; what is left out keeps the world's (a new character:
 * no aliases, type `npc`, no description, no fields). A character's roleplay notes (`blueprint`)
 * are the world file's and are never published. Every string, a field's key or value included, is
 * well-formed Unicode without NUL, as a world's characters are (`WorldDocument`): what replaces
 * them holds no text the log, a plugin's data or another plugin reading `ctx.world` cannot keep.
 */
export const PublishedCharacter = z
  .object({
    id: z.string().min(1),
    name: z.string().min(1),
    aliases: z.array(z.string().min(1)).optional(),
    type: z.string().min(1).optional(),
    description: z.string().optional(),
    /** The character's fields as they are now (replacing the world's, not merged into them). */
    fields: z.record(z.string(), z.unknown()).optional(),
  })
  .strict()
  .superRefine(addMalformedTextIssues);
export type PublishedCharacter = z.infer<typeof PublishedCharacter>;

/** Characters one provider may publish (a character-keeping plugin's bound). */
export const MAX_PUBLISHED_CHARACTERS = 1_000;

/** One provider's published characters: each id once. */
export const PublishedCharacters = z
  .array(PublishedCharacter)
  .max(MAX_PUBLISHED_CHARACTERS)
  .superRefine((characters, ctx) => {
    const seen = new Set<string>();
    characters.forEach((c, i) => {
      if (seen.has(c.id)) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `character "${c.id}" is published twice` });
      seen.add(c.id);
    });
  });

/**
 * The session's characters with published ones applied: a published character with the id of one
 * in `characters` replaces what it gives of it, in place (its aliases and blueprint stay unless
 * given); a new id comes after them, in the published order. Neither input is changed.
 */
export function withPublishedCharacters(characters: readonly WorldCharacter[], published: readonly PublishedCharacter[]): WorldCharacter[] {
  const out = characters.map((c) => ({ ...c }));
  const at = new Map(out.map((c, i) => [c.id, i]));
  for (const p of published) {
    const given = Object.fromEntries(Object.entries(structuredClone(p)).filter(([, v]) => v !== undefined)) as PublishedCharacter;
    const i = at.get(p.id);
    if (i !== undefined) out[i] = { ...out[i], ...given };
    else {
      at.set(p.id, out.length);
      out.push({ aliases: [], type: 'npc', description: '', fields: {}, ...given });
    }
  }
  return out;
}
