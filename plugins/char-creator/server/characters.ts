import type { HandlerContext, PluginDataReader, PublishedCharacter } from '../../../libs/plugins-sdk';
import { orderedFields } from './segments';

/** The namespace of the session's characters this plugin keeps: key = character id. */
export const CHARACTERS_NAMESPACE = 'characters';

/** The most characters read back (the store's bound). */
const MAX_CHARACTERS = 1000;

/** A character as this plugin keeps it (the id is the row's key). */
export interface KeptCharacter {
  name: string;
  type: string;
  description: string;
  fields: Record<string, unknown>;
}

export interface SessionCharacter extends KeptCharacter {
  id: string;
}

/**
 * The session's characters: the world's, each replaced by the record this plugin keeps for it
 * (once a field changed), then the ones the story created; sorted by id.
 */
export async function sessionCharacters(world: HandlerContext['world'], data: PluginDataReader): Promise<SessionCharacter[]> {
  const kept = new Map((await data.list(CHARACTERS_NAMESPACE, { limit: MAX_CHARACTERS })).map((r) => [r.key, r.value as KeptCharacter]));
  const byId = new Map<string, SessionCharacter>();
  for (const c of world?.characters ?? []) byId.set(c.id, { id: c.id, name: c.name, type: c.type, description: c.description, fields: { ...c.fields } });
  for (const [id, c] of kept) byId.set(id, { id, name: c.name, type: c.type, description: c.description, fields: { ...c.fields } });
  return [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * The session's characters as a handler's `ctx.world` has them — this plugin's rows already applied
 * by the engine (`session.world-context@1`, below), so a segment handler reads no rows itself (one
 * statement a turn fewer) — sorted by id. Tools read the rows (`sessionCharacters`): a tool sees the
 * writes made earlier in the same turn.
 */
export function worldCharacters(world: HandlerContext['world']): SessionCharacter[] {
  return (world?.characters ?? [])
    .map((c) => ({ id: c.id, name: c.name, type: c.type, description: c.description, fields: { ...c.fields } }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * What this plugin publishes through `session.world-context@1` (`characters`): each character it
 * keeps — a world character one of whose fields changed, a character the story created — by id,
 * fields in the schema's order then by name. The engine applies them to the world every runtime's
 * body and every handler see (the narrator's `<player-character>` / `<character-profiles>`): a world
 * character keeps its aliases and roleplay notes, a created one comes after the world's.
 */
export async function publishedCharacters(world: HandlerContext['world'], data: PluginDataReader): Promise<PublishedCharacter[]> {
  const declared = Object.keys(world?.characterSchema.properties ?? {});
  const kept = await data.list(CHARACTERS_NAMESPACE, { limit: MAX_CHARACTERS });
  return kept
    .map(({ key, value }) => {
      const c = value as KeptCharacter;
      return { id: key, name: c.name, type: c.type, description: c.description, fields: orderedFields(c.fields, declared) };
    })
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
