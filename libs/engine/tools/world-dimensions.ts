import { modelFacingJson } from '../../context';
import { evaluatePointer, JSON_POINTER_PATTERN, type LoadedWorld } from '../../plugins-sdk';
import { extendedWorld } from '../plugin-host/world-context';
import type { ToolRunContext } from './port';
import { DEFAULT_PAGE, MAX_PAGE, type Tool } from './tool';
import { toolError, toolSuccess } from './tool-result';
import { WORLD_DIMENSION_GET, WORLD_DIMENSION_LIST } from '../catalog/framework-tools';

/** Largest piece of a string value one call returns, in characters (code points). */
export const STRING_PAGE = 4000;

/**
 * The frozen `world.dimensions@1` snapshot the runtime's request saw: the session's world with the
 * `session.world-context@1` providers applied (through the step's resolver, so a recorded result is
 * reused and no handler runs twice), or the world as it is without `context.plugins`.
 */
async function snapshot(context: ToolRunContext): Promise<LoadedWorld['dimensions']> {
  const world = context.plugins ? await extendedWorld(context.plugins, context.scope.world) : context.scope.world;
  return world?.dimensions ?? {};
}

const sortedIds = (dimensions: LoadedWorld['dimensions']) => Object.keys(dimensions).sort();

const pageArgs = {
  offset: { type: 'integer', minimum: 0, description: 'Where the page starts (default 0).' },
  limit: {
    type: 'integer',
    minimum: 1,
    maximum: MAX_PAGE,
    description: `Page size (default ${DEFAULT_PAGE}; for a string value, characters, default ${STRING_PAGE}).`,
  },
};

/** A page of a list value (array items, object entries in order) or of a long string; other values whole. */
function page(value: unknown, offset: number, limit: number | undefined): Record<string, unknown> {
  const slice = (total: number, size: number) => {
    const end = Math.min(total, offset + size);
    return { offset, total, end, ...(end < total ? { nextOffset: end } : {}) };
  };
  if (typeof value === 'string') {
    const chars = Array.from(value);
    if (chars.length <= (limit ?? STRING_PAGE) && offset === 0) return { value };
    const p = slice(chars.length, Math.min(limit ?? STRING_PAGE, STRING_PAGE));
    return { value: chars.slice(offset, p.end).join(''), page: { offset, total: p.total, ...('nextOffset' in p ? { nextOffset: p.nextOffset } : {}) } };
  }
  const entries = Array.isArray(value) ? value : value !== null && typeof value === 'object' ? Object.entries(value) : null;
  if (!entries || (entries.length <= (limit ?? DEFAULT_PAGE) && offset === 0)) return { value };
  const p = slice(entries.length, limit ?? DEFAULT_PAGE);
  const part = entries.slice(offset, p.end);
  return {
    value: Array.isArray(value) ? part : Object.fromEntries(part as [string, unknown][]),
    page: { offset, total: p.total, ...('nextOffset' in p ? { nextOffset: p.nextOffset } : {}) },
  };
}

/** `world-dimension-get`: one dimension's frozen value by id, optionally at a JSON pointer inside it, paged. */
export const worldDimensionGetTool: Tool = {
  definition: {
    name: WORLD_DIMENSION_GET,
    description:
      "Read one world dimension's current value (frozen for this turn) by its id. `path` is a JSON pointer into the value (e.g. /factions/0/name). A long list, object or string comes in pages: pass `offset` from `page.nextOffset` for the next one.",
    parameters: {
      type: 'object',
      properties: {
        id: { type: 'string', minLength: 1, description: 'The dimension id.' },
        path: { type: 'string', pattern: JSON_POINTER_PATTERN, description: 'A JSON pointer into the value; empty or left out: the whole value.' },
        ...pageArgs,
      },
      required: ['id'],
      additionalProperties: false,
    },
  },
  async run(args, context) {
    const dimensions = await snapshot(context);
    const id = args.id as string;
    const dimension = Object.hasOwn(dimensions, id) ? dimensions[id] : undefined;
    if (!dimension) {
      const ids = sortedIds(dimensions);
      return toolError(
        'NOT_FOUND',
        `no world dimension "${id}"${ids.length ? `: the ids are ${ids.slice(0, DEFAULT_PAGE).join(', ')}${ids.length > DEFAULT_PAGE ? ', … (world-dimension-list pages them all)' : ''}` : ': this world has no dimensions'}`,
      );
    }
    const path = typeof args.path === 'string' ? args.path : '';
    const at = evaluatePointer(modelFacingJson(dimension.value), path);
    if (!at.found) return toolError('NOT_FOUND', `dimension "${id}" has no value at ${at.at} (path ${path})`);
    return toolSuccess({
      id,
      name: dimension.name,
      version: dimension.version,
      ...(path ? { path } : {}),
      ...page(at.value, (args.offset as number | undefined) ?? 0, args.limit as number | undefined),
    });
  },
};

/** `world-dimension-list`: the dimensions of the frozen snapshot (id, name, description, version), by id, a page at a time. */
export const worldDimensionListTool: Tool = {
  definition: {
    name: WORLD_DIMENSION_LIST,
    description:
      "List the world's dimensions (id, name, description, version) without their values, ordered by id, a page at a time: pass `offset` from `page.nextOffset` for the next page. Read a value with world-dimension-get.",
    parameters: {
      type: 'object',
      properties: { ...pageArgs, limit: { ...pageArgs.limit, description: `Page size (default ${DEFAULT_PAGE}).` } },
      additionalProperties: false,
    },
  },
  async run(args, context) {
    const dimensions = await snapshot(context);
    const ids = sortedIds(dimensions);
    const offset = (args.offset as number | undefined) ?? 0;
    const end = Math.min(ids.length, offset + ((args.limit as number | undefined) ?? DEFAULT_PAGE));
    return toolSuccess({
      dimensions: ids.slice(offset, end).map((id) => {
        const d = dimensions[id];
        return { id, name: d.name, ...(d.description !== undefined ? { description: d.description } : {}), version: d.version };
      }),
      page: { offset, total: ids.length, ...(end < ids.length ? { nextOffset: end } : {}) },
    });
  },
};
