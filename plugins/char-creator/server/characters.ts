import type { HandlerContext, PluginDataReader } from '../../../libs/plugins-sdk';

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
