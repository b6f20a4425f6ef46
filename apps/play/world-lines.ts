import type { WorldSummary } from './play-client';
import { printable } from './wrap';

/** A world's name as one line of the terminal: control characters dropped, line breaks as spaces. */
export const worldName = (name: string): string => printable(name.replace(/\s*[\r\n]+\s*/g, ' ')).trim() || '(no name)';

const count = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/** Its characters, lorebook entries and openings, in words (`1 character, 12 lorebook entries, 2 openings`). */
export function worldCounts(world: { characters?: number; lorebookEntries?: number; openings?: number }): string {
  return [
    count(world.characters ?? 0, 'character', 'characters'),
    count(world.lorebookEntries ?? 0, 'lorebook entry', 'lorebook entries'),
    count(world.openings ?? 0, 'opening', 'openings'),
  ].join(', ');
}

/** Built-in (the deployment's, read-only) or the tenant's own, at which revision. */
export const worldKind = (world: Pick<WorldSummary, 'builtIn' | 'revision' | 'archived'>): string =>
  world.builtIn ? 'built-in' : `yours, revision ${world.revision}${world.archived ? ', archived' : ''}`;

/**
 * One world of `/worlds`: its id first (what `--world` and `/world` take; a line that starts with it
 * reads left to right, whatever the script of the name), its name, kind and counts.
 */
export const worldLine = (world: WorldSummary): string => `${world.id} — ${worldName(world.name)} · ${worldKind(world)} · ${worldCounts(world)}`;

/** The counts of a whole document (the answer of `GET /v1/worlds/:id` or an import), as the list counts them. */
export function documentCounts(document: Record<string, unknown>): { characters: number; lorebookEntries: number; openings: number } {
  const length = (key: string) => (Array.isArray(document[key]) ? (document[key] as unknown[]).length : 0);
  return { characters: length('characters'), lorebookEntries: length('lorebook'), openings: length('openings') };
}
