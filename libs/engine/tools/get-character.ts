import { characterSheet } from '../../data-boundary';
import type { Tool } from './tool';
import { toolError, toolSuccess } from './tool-result';
import { GET_CHARACTER } from '../catalog/framework-tools';
import { requestCharacters } from '../plugin-host/world-context';

/** Names compare case-insensitively, Unicode-normalized, ignoring surrounding spaces. */
const fold = (name: string) => name.normalize('NFKC').trim().toLocaleLowerCase('und');

/**
 * `get-character`: a character of the session by name or alias (case-insensitive) — the world's, as
 * the `session.world-context@1` providers publish them (a character the story created included) — as its
 * model-facing sheet (spec §4 data boundary: no UUIDs, no ISO times; ranged numbers as "value/max").
 */
export const getCharacterTool: Tool = {
  definition: {
    name: GET_CHARACTER,
    description:
      "Look up a character of this story by name or alias (case-insensitive). Returns the character's sheet: name, aliases, type, description and fields.",
    parameters: {
      type: 'object',
      properties: { name: { type: 'string', minLength: 1, description: "The character's name or one of its aliases." } },
      required: ['name'],
      additionalProperties: false,
    },
  },
  async run(args, context) {
    const { plugins, scope } = context;
    const world = scope.world;
    // the session's characters as the step's request showed them (the recorded session.world-context@1 results)
    const published = await requestCharacters(plugins, world);
    const wanted = fold(args.name as string);
    const characters = published ?? world?.characters ?? [];
    const found = characters.find((c) => fold(c.name) === wanted) ?? characters.find((c) => c.aliases.some((a) => fold(a) === wanted));
    if (!found) return toolError('NOT_FOUND', `no character named "${String(args.name)}"`);
    return toolSuccess(characterSheet(found, world?.characterSchema));
  },
};
