/**
 * The names of the framework's own tools (spec §3, §4, §6), in the order they are defined. The
 * catalog checks every runtime's `agent.tools` against them at start-up; tools/ defines the tools
 * under these names. Names only, so the catalog never loads the tools (which read the catalog).
 */
export const RUNTIME_DONE = 'runtime-done';
export const EMIT_EVENT = 'emit-event';
export const WORLD_DIMENSION_GET = 'world-dimension-get';
export const WORLD_DIMENSION_LIST = 'world-dimension-list';
export const GET_CHARACTER = 'get-character';

export const FRAMEWORK_TOOLS = [RUNTIME_DONE, EMIT_EVENT, WORLD_DIMENSION_GET, WORLD_DIMENSION_LIST, GET_CHARACTER] as const;
export type FrameworkToolName = (typeof FRAMEWORK_TOOLS)[number];

export const isFrameworkTool = (name: string): name is FrameworkToolName => (FRAMEWORK_TOOLS as readonly string[]).includes(name);
