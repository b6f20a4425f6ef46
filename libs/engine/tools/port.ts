/**
 * The seam between the agent loop (libs/engine/agent, issue 11 part 1) and the tools (framework
 * tools and plugin tools, issue 11 part 2). The loop asks `definitions` what to send, and for each
 * tool call of a reply asks `execute` for an outcome; it records the call and the outcome as events
 * and appends the outcome's effects (plugin-data writes, emitted events) in the same append, so a
 * resumed loop reuses a recorded outcome and never executes the call again. A tool never throws
 * for a bad call: the model gets a JSON error with a code from `TOOL_ERROR_CODES`.
 */
import type { InputSlot, RuntimeExport } from '../../context';
import type { EventData } from '../../events';
import type { ToolCall, ToolDefinition } from '../../providers';
import type { ActivationPayload } from '../plugin-host/event-emissions';
import type { ExecutionJournal } from '../journal/journal';
import type { ExecutionScope } from '../plugin-host/handler-context';
import type { PluginDataChange } from '../plugin-host/plugin-data-buffer';
import type { PluginDataScopes as ToolPluginData } from '../plugin-host/journal-plugin-data';
import type { GeneratedAsset } from '../plugin-host/asset-buffer';
import type { RequestPlugins } from '../plugin-host/request-extensions';
import type { CatalogRuntime, RuntimeCatalog } from '../catalog/runtime-catalog';

/** The closed set of error codes a tool result may carry back to the model (spec §6). */
export const TOOL_ERROR_CODES = [
  'TOOL_NOT_AUTHORIZED',
  'TOOL_UNKNOWN',
  'INVALID_ARGUMENTS',
  'TOOL_FAILED',
  'TOOL_TIMEOUT',
  'NOT_FOUND',
  'EVENT_ALREADY_EMITTED',
  'EVENT_INVALID',
  'RUNTIME_DONE_NOT_ALLOWED',
] as const;
export type ToolErrorCode = (typeof TOOL_ERROR_CODES)[number];

/** Everything a tool of one runtime's step may read. */
export interface ToolRunContext {
  catalog: RuntimeCatalog;
  runtime: CatalogRuntime;
  execution: ExecutionJournal;
  /** tenant, session, locale, world, settings (as handlers get them). */
  scope: ExecutionScope;
  /** `ctx.inputSlots`: the runtime's typed inputs with their original values and `resultId`. */
  inputSlots: readonly InputSlot[];
  /** `ctx.exports`: the exports the runtime's request shows, with their original values and `resultId` (none: `[]`). */
  exports?: readonly RuntimeExport[];
  /** Topics already emitted in this execution (recorded): `emit-event` allows one per topic per turn. */
  emittedTopics: ReadonlySet<string>;
  /**
   * The plugins of this step's request (the registry and the step's resolver): `world-dimension-*`
   * read the same `session.world-context@1` snapshot the request saw (a recorded result is reused).
   * Without it they read `scope.world` as it is.
   */
  plugins?: RequestPlugins;
  /**
   * Where a plugin tool reads its plugin's data in this call: the store as the step's journal sees it
   * (`pluginDataAt`: a read its siblings made at the same plugin-data version is answered once).
   * Without it, the tool set's own (`createToolSet`'s `pluginData`).
   */
  pluginData?: ToolPluginData;
}

/** What one tool call came to. `content` is the JSON text the model gets as the tool result. */
export interface ToolOutcome {
  content: string;
  ok: boolean;
  errorCode?: ToolErrorCode;
  /** Plugin data the tool wrote (plugin tools only), appended with the outcome. */
  changes: readonly PluginDataChange[];
  /** The plugin whose data `changes` are (a plugin tool's own plugin); default: the runtime's plugin. */
  changesPluginId?: string;
  /** Events the tool emitted (`emit-event`, a plugin tool's `ctx.emit`), appended with the outcome. */
  emissions: readonly { topic: string; payload: ActivationPayload }[];
  /** `runtime-done` was called (accepted): the runtime completes with no further model call. */
  done?: boolean;
  /** Assets a successful plugin tool generated (`ctx.assets`): stored, then recorded with the outcome. */
  assets?: readonly GeneratedAsset[];
  /**
   * The tool returned `ctx.suspend(…)`: the runtime suspends on this call (`execution.suspended@1`,
   * no `tool.completed@1`); the resume's payload becomes the call's result. Its effects are kept.
   */
  suspend?: { waitingFor: EventData<'execution.suspended@1'>['waitingFor'] };
}

/** The tools of a runtime: what its requests declare, and how each call is executed. */
export interface ToolSet {
  /** Tool definitions sent with every step of this runtime, in a stable order (English descriptions). */
  definitions(runtime: CatalogRuntime, catalog: RuntimeCatalog): ToolDefinition[];
  execute(call: ToolCall, context: ToolRunContext): Promise<ToolOutcome>;
}
