import type { ToolCall, ToolDefinition } from '../../providers';
import type { CatalogRuntime, RuntimeCatalog } from '../catalog/runtime-catalog';
import { authorizedToolNames } from './authorization';
import { isFrameworkTool } from '../catalog/framework-tools';
import { emitEventTool } from './emit-event';
import { declaredEvents } from './event-catalog';
import { getCharacterTool } from './get-character';
import { checkSchema } from './json-schema';
import { contributedTools, type ToolPluginData } from './plugin-tools';
import type { ToolOutcome, ToolRunContext, ToolSet } from './port';
import { runtimeDoneAllowed, runtimeDoneTool } from './runtime-done';
import { RUNTIME_DONE } from '../catalog/framework-tools';
import type { Tool } from './tool';
import { toolError } from './tool-result';
import { worldDimensionGetTool, worldDimensionListTool } from './world-dimensions';

export interface ToolSetOptions {
  /** Where plugin tools read their plugin's data (`deps.pluginData`, the plugin data store). */
  pluginData: ToolPluginData;
}

/** The tools of one catalog generation, built once per catalog. */
interface CatalogTools {
  tools: Map<string, Tool>;
  /** Each tool's definition as sent: a deep-frozen copy, made once and shared by every request. */
  sent: Map<string, ToolDefinition>;
  pluginTools: ReadonlySet<string>;
  hasEvents: boolean;
}

/**
 * The framework tools and the loaded plugins' tools behind the loop's seam (`ToolSet`). A call is
 * answered, never thrown: a tool the runtime does not declare gets `TOOL_NOT_AUTHORIZED`, a name
 * that is no tool `TOOL_UNKNOWN`, arguments that fail the tool's JSON schema `INVALID_ARGUMENTS`
 * (ajv's messages), `runtime-done` under an output schema `RUNTIME_DONE_NOT_ALLOWED`.
 */
export function createToolSet(options: ToolSetOptions): ToolSet {
  const perCatalog = new WeakMap<RuntimeCatalog, CatalogTools>();
  const toolsOf = (catalog: RuntimeCatalog): CatalogTools => {
    let entry = perCatalog.get(catalog);
    if (!entry) {
      const events = declaredEvents(catalog.plugins);
      const plugin = contributedTools(catalog.plugins, { pluginData: options.pluginData, events });
      const tools = new Map<string, Tool>([
        [RUNTIME_DONE, runtimeDoneTool],
        ['emit-event', emitEventTool(events)],
        [worldDimensionGetTool.definition.name, worldDimensionGetTool],
        [worldDimensionListTool.definition.name, worldDimensionListTool],
        [getCharacterTool.definition.name, getCharacterTool],
      ]);
      for (const [name, tool] of plugin) if (!tools.has(name)) tools.set(name, tool);
      const sent = new Map([...tools].map(([name, tool]) => [name, deepFrozen(structuredClone(tool.definition))]));
      entry = { tools, sent, pluginTools: new Set([...plugin.keys()].filter((n) => !isFrameworkTool(n))), hasEvents: events.length > 0 };
      perCatalog.set(catalog, entry);
    }
    return entry;
  };
  const authorized = (runtime: CatalogRuntime, catalog: RuntimeCatalog) => {
    const entry = toolsOf(catalog);
    return { entry, names: authorizedToolNames(runtime, entry) };
  };

  return {
    definitions(runtime, catalog): ToolDefinition[] {
      const { entry, names } = authorized(runtime, catalog);
      return names.map((name) => entry.sent.get(name)!);
    },

    async execute(call: ToolCall, context: ToolRunContext): Promise<ToolOutcome> {
      const { entry, names } = authorized(context.runtime, context.catalog);
      const tool = entry.tools.get(call.name);
      if (!tool) return toolError('TOOL_UNKNOWN', `there is no tool "${call.name}"${names.length ? `: the tools are ${names.join(', ')}` : ''}`);
      if (call.name === RUNTIME_DONE && !runtimeDoneAllowed(context.runtime)) return tool.run({}, context); // refused with its own code
      if (!names.includes(call.name))
        return toolError('TOOL_NOT_AUTHORIZED', `this runtime may not call "${call.name}"${names.length ? `: its tools are ${names.join(', ')}` : ''}`);
      const args = call.arguments ?? {};
      if (args === null || typeof args !== 'object' || Array.isArray(args)) return toolError('INVALID_ARGUMENTS', 'the arguments must be a JSON object');
      const check = checkSchema(tool.argumentsSchema ?? tool.definition.parameters, args);
      if (!check.ok) return toolError('INVALID_ARGUMENTS', `the arguments of "${call.name}" do not match its parameters: ${check.messages.join('; ')}`);
      try {
        return await tool.run(structuredClone(args), context);
      } catch (error) {
        return toolError('TOOL_FAILED', `tool "${call.name}" failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    },
  };
}

/**
 * A value frozen at every depth: a definition sent with every request of a catalog is one object,
 * not a copy per request (a copy of every definition on every step was ~0.5 % of a worker's CPU
 * per Emberback turn, issue 33), so no request can change what the next one sends.
 */
function deepFrozen<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFrozen(v);
    Object.freeze(value);
  }
  return value;
}

/** The default tool set the agent loop uses: the framework tools and the loaded plugins' tools. */
export const frameworkAndPluginTools = createToolSet;

const toolSets = new WeakMap<ToolPluginData, ToolSet>();

/**
 * The tool set of a worker's deps: `deps.tools`, else the one `createToolSet` over `pluginData` made
 * for the first caller (per store: a tool set holds nothing else). A new one per agent loop and
 * per compaction barrier rebuilt every catalog's tools (the plugins' declared events, their tools,
 * the emit-event tool) twice per narrator turn (issue 33).
 */
export function toolSetOf(deps: { tools?: ToolSet; pluginData: ToolPluginData }): ToolSet {
  if (deps.tools) return deps.tools;
  let set = toolSets.get(deps.pluginData);
  if (!set) {
    set = createToolSet({ pluginData: deps.pluginData });
    toolSets.set(deps.pluginData, set);
  }
  return set;
}
