import type { CatalogRuntime } from '../catalog/runtime-catalog';
import { EMIT_EVENT, FRAMEWORK_TOOLS, isFrameworkTool, RUNTIME_DONE } from '../catalog/framework-tools';
import { runtimeDoneDefined } from './runtime-done';

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
