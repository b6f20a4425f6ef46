import type { WorldListRow, WorldProvenance, WorldRow } from '../../events';
import type { WorldDocument } from '../../plugins-sdk';

/** A world as the API answers it: its place (id, revision) and its whole document. */
export interface WorldView {
  id: string;
  name: string;
  revision: number;
  archived: boolean;
  /** A deployment's world from a WORLD.md file: listed to every tenant, read-only, revision 1. */
  builtIn: boolean;
  provenance?: WorldProvenance;
  createdAt?: string;
  updatedAt?: string;
  document: Record<string, unknown>;
}

/** A world as the list gives it: no document, a few counts. */
export interface WorldSummaryView extends Omit<WorldView, 'document'> {
  description: string;
  characters: number;
  lorebookEntries: number;
  openings: number;
}

/** What a tenant's world row says of its place, as a view has it (the list row and the full row share it). */
function tenantWorldPlace(row: Omit<WorldListRow, 'description' | 'characters' | 'lorebookEntries' | 'openings'>): Omit<WorldView, 'document'> {
  return {
    id: row.worldId,
    name: row.name,
    revision: row.revision,
    archived: row.archived,
    builtIn: false,
    provenance: row.provenance,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export function worldView(row: WorldRow): WorldView {
  return { ...tenantWorldPlace(row), document: row.document };
}

export function builtInWorldView(id: string, document: WorldDocument): WorldView {
  return { id, name: document.name, revision: 1, archived: false, builtIn: true, document };
}

export function worldSummary(view: WorldView): WorldSummaryView {
  const { document, ...rest } = view;
  const length = (key: string) => (Array.isArray(document[key]) ? (document[key] as unknown[]).length : 0);
  return {
    ...rest,
    description: typeof document.description === 'string' ? document.description : '',
    characters: length('characters'),
    lorebookEntries: length('lorebook'),
    openings: length('openings'),
  };
}

/** A tenant's world as the list gives it, from its list row (no document read). */
export function worldListSummary(row: WorldListRow): WorldSummaryView {
  const { description, characters, lorebookEntries, openings } = row;
  return { ...tenantWorldPlace(row), description, characters, lorebookEntries, openings };
}
