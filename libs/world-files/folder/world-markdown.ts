import { WorldDocument } from '../../plugins-sdk';
import { frontMatterYaml } from './front-matter-yaml';
import { withoutDefaults } from './without-defaults';
import { assertWorldId } from './world-id';

/** The order of a WORLD.md's front matter fields: who the world is first, then its people, then its data; a field not named here follows, in the document's order. */
const FIELD_ORDER = [
  'name',
  'description',
  'tags',
  'plugins',
  'openings',
  'characterSchema',
  'characters',
  'seats',
  'dimensions',
  'schema',
  'entries',
  'lorebook',
  'pluginConfig',
  'extensions',
] as const;

export interface WorldMarkdownOptions {
  /** Written first in the front matter (a WORLD.md's `id`); without it, the file takes its folder's name as id. */
  id?: string;
}

/**
 * The text of a WORLD.md for a valid world document: YAML front matter (`id` when given, then the
 * fields in {@link FIELD_ORDER}, each left out where it holds the value the schema would fill in)
 * and the lore as the body. Reading it back with `parseWorldFile` gives the same document
 * (`lore` is normalised by the schema the way the loader reads a body: `\n` line breaks, trimmed).
 * An `id` that is not a world id throws `INVALID_WORLD_ID`.
 */
export function worldMarkdown(document: WorldDocument, options: WorldMarkdownOptions = {}): string {
  if (options.id !== undefined) assertWorldId(options.id);
  const { lore, ...fields } = withoutDefaults(WorldDocument, document) as Partial<WorldDocument>;
  const front: Record<string, unknown> = options.id === undefined ? {} : { id: options.id };
  for (const key of FIELD_ORDER) if (key in fields) front[key] = fields[key];
  for (const [key, value] of Object.entries(fields)) if (!(key in front)) front[key] = value;
  const body = lore ?? '';
  return `---\n${frontMatterYaml(front)}---\n${body === '' ? '' : `\n${body}\n`}`;
}
