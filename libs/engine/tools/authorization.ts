import type { CatalogRuntime } from '../catalog/runtime-catalog';
import { EMIT_EVENT } from './emit-event';
import { GET_CHARACTER } from './get-character';
import { RUNTIME_DONE, runtimeDoneDefined } from './runtime-done';
import { WORLD_DIMENSION_GET, WORLD_DIMENSION_LIST } from './world-dimensions';

/** The framework's own tools (spec §3, §4, §6), in the order they are defined. */
export const FRAMEWORK_TOOLS = [RUNTIME_DONE, EMIT_EVENT, WORLD_DIMENSION_GET, WORLD_DIMENSION_LIST, GET_CHARACTER] as const;
export type FrameworkToolName = (typeof FRAMEWORK_TOOLS)[number];

export const isFrameworkTool = (name: string): name is FrameworkToolName => (FRAMEWORK_TOOLS as readonly string[]).includes(name);

/**
 * The names of the tools a runtime may call, in definition order: the framework tools first
 * (`runtime-done` by the completion rules, `emit-event` when declared or when the runtime
 * advertises events and some plugin declares a topic, the others when declared in `agent.tools`),
 * then the plugin tools it declares in `agent.tools`, in declaration order. A declared name that
 * is no tool stops start-up (the runtime catalog checks it), so none reaches this point; a call to
 * a name that is no tool gets `TOOL_UNKNOWN`.
 */
export function authorizedToolNames(runtime: CatalogRuntime, options: { pluginTools: ReadonlySet<string>; hasEvents: boolean }): string[] {
  const agent = runtime.manifest.agent;
  if (!agent) return [];
  const declared = new Set(agent.tools);
  const framework = FRAMEWORK_TOOLS.filter((name) => {
    if (name === RUNTIME_DONE) return runtimeDoneDefined(runtime);
    if (name === EMIT_EVENT) return options.hasEvents && (declared.has(name) || agent.advertiseEvents);
    return declared.has(name);
  });
  const plugin = agent.tools.filter((name, i) => !isFrameworkTool(name) && options.pluginTools.has(name) && agent.tools.indexOf(name) === i);
  return [...framework, ...plugin];
}
