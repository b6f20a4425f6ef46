import { z } from 'zod';
import type { PluginDataReader } from '../../events';
import { WaitingFor } from '../../events';
import type { LoadedPlugin, Locale, ToolContext, ToolContribution, ToolInputSlot, ToolRuntimeExport, ToolSuspension } from '../../plugins-sdk';
import { AssetBuffer } from '../plugin-host/asset-buffer';
import { EmissionBuffer } from '../plugin-host/event-emissions';
import { emptyPluginData, handlerContext } from '../plugin-host/handler-context';
import { within } from '../plugin-host/invoke';
import { PluginDataBuffer } from '../plugin-host/plugin-data-buffer';
import { executionServices } from '../plugin-host/execution-services';
import { storePluginData } from '../plugin-host/store-plugin-data';
import { requestCharacters } from '../plugin-host/world-context';
import type { DeclaredEvent } from './event-catalog';
import { checkSchema } from './json-schema';
import type { Tool } from './tool';
import { toolError, toolSuccess } from './tool-result';

/** Where plugin tools read their plugin's data (the plugin data store; scoped to tenant, session and plugin). */
export interface ToolPluginData {
  scope(scope: { tenantId: string; sessionId: string; pluginId: string }): PluginDataReader;
}

/** Largest tool result, as JSON text. */
export const MAX_TOOL_RESULT_CHARS = 64_000;

const JsonResult = z.json();

class ToolTimeout extends Error {}

/** A tool's or a function runtime's `ctx.emit`: a declared topic, whose payload matches the topic's schema (when it can be read). */
export function checkedEmit(buffer: EmissionBuffer, events: ReadonlyMap<string, DeclaredEvent>) {
  return (topic: string, payload: unknown = {}) => {
    const event = events.get(topic);
    if (event?.readable) {
      const check = checkSchema(event.payload, payload);
      if (!check.ok) throw new Error(`ctx.emit(${topic}): the payload does not match its schema: ${check.messages.join('; ')}`);
    }
    buffer.emit(topic, payload);
  };
}

/**
 * A tool a plugin contributes (`contributes.tools`, run by its server entry's `api.registerTool`).
 * Its code gets the handler context, `ctx.inputSlots`, `ctx.pluginData` with `set` / `delete`
 * (kept until it returns), `ctx.emit` and `ctx.assets`, within the handler time limit. Its writes and emissions
 * are returned with its result; a tool that throws (`TOOL_FAILED`), times out (`TOOL_TIMEOUT`) or
 * returns something that is not JSON (`TOOL_FAILED`) keeps none of them.
 */
export function pluginTool(options: {
  plugin: LoadedPlugin;
  contribution: ToolContribution;
  pluginData: ToolPluginData;
  events: readonly DeclaredEvent[];
}): Tool {
  const { plugin, contribution } = options;
  const pluginId = plugin.manifest.id;
  const events = new Map(options.events.map((e) => [e.topic, e]));
  return {
    definition: { name: contribution.name, description: contribution.description, parameters: contribution.parameters },
    async run(args, context) {
      const host = context.catalog.host;
      const registered = host.registry.tools.get(contribution.name);
      if (!registered || registered.pluginId !== pluginId)
        return toolError('TOOL_FAILED', `tool "${contribution.name}" has no api.registerTool registration in plugin ${pluginId}'s server entry`);
      const { scope } = context;
      const buffer = new PluginDataBuffer(
        pluginId,
        (context.pluginData ?? options.pluginData).scope({ tenantId: scope.tenantId, sessionId: scope.sessionId, pluginId }),
      );
      const emissions = new EmissionBuffer(pluginId, new Set(events.keys()));
      const assets = new AssetBuffer(pluginId);
      const services = executionServices({
        pluginId,
        host,
        scope,
        pluginData: storePluginData(context.pluginData ?? options.pluginData),
        recorded: context.execution.extensionResults,
      });
      // ctx.world's characters as the step's request saw them (its recorded session.world-context@1 results)
      const characters = await requestCharacters(context.plugins, scope.world);
      const base = handlerContext(characters ? { ...scope, characters } : scope, pluginId, emptyPluginData, plugin, services); // its pluginData is replaced below;
      const suspensions = new WeakMap<object, ToolSuspension>();
      const ctx: ToolContext = Object.freeze({
        ...base,
        inputSlots: Object.freeze(structuredClone(context.inputSlots)) as readonly ToolInputSlot[],
        exports: Object.freeze(structuredClone(context.exports ?? [])) as readonly ToolRuntimeExport[],
        pluginData: buffer.writer(),
        runtime: Object.freeze({ pluginId: context.runtime.pluginId, runtimeId: context.runtime.runtimeId }),
        emit: checkedEmit(emissions, events),
        assets: assets.assets(),
        suspend: (request: { waitingFor: unknown }) => suspension(contribution.name, request, suspensions),
      });
      let raw: unknown;
      try {
        raw = await within(
          host.handlerTimeoutMs,
          () => registered.fn(structuredClone(args), ctx),
          () => new ToolTimeout(),
          host.blockingWatch({ pluginId, point: 'tool', handlerId: contribution.name }),
        );
      } catch (error) {
        if (error instanceof ToolTimeout) return toolError('TOOL_TIMEOUT', `tool "${contribution.name}" did not answer within ${host.handlerTimeoutMs} ms`);
        return toolError('TOOL_FAILED', `tool "${contribution.name}" failed: ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        buffer.close(); // a write or emission after the end or the time limit throws and is never kept
        emissions.close();
        assets.close();
      }
      const effects = { changes: buffer.changes(), emissions: emissions.emissions(), assets: assets.submitted(), locale: scope.locale };
      const suspended = typeof raw === 'object' && raw !== null ? suspensions.get(raw) : undefined;
      if (suspended) return { ...toolSuccess(null, effects), suspend: { waitingFor: WaitingFor.parse(suspended.waitingFor) } };
      return result(contribution.name, raw, { ...effects, done: contribution.completesRuntime });
    },
  };
}

/** `ctx.suspend`: a checked `waitingFor`, in a value only this call's `ctx` made (a look-alike object is a normal result). */
function suspension(name: string, request: { waitingFor: unknown }, made: WeakMap<object, ToolSuspension>): ToolSuspension {
  const parsed = WaitingFor.safeParse(request?.waitingFor);
  if (!parsed.success)
    throw new Error(`tool "${name}": ctx.suspend: waitingFor must be { kind: "approval" | "form", prompt, schema? }: ${parsed.error.message}`);
  const value: ToolSuspension = Object.freeze({ kind: 'suspend', waitingFor: Object.freeze(parsed.data) });
  made.set(value, value);
  return value;
}

function result(
  name: string,
  raw: unknown,
  effects: {
    changes: ReturnType<PluginDataBuffer['changes']>;
    emissions: ReturnType<EmissionBuffer['emissions']>;
    assets: ReturnType<AssetBuffer['submitted']>;
    done: boolean;
    locale: Locale;
  },
) {
  const parsed = JsonResult.safeParse(raw === undefined ? null : withoutUndefinedKeys(raw));
  if (!parsed.success) return toolError('TOOL_FAILED', `tool "${name}" returned a value that is not JSON`);
  if (JSON.stringify(parsed.data).length > MAX_TOOL_RESULT_CHARS)
    return toolError('TOOL_FAILED', `tool "${name}" returned more than ${MAX_TOOL_RESULT_CHARS} characters of JSON`);
  return toolSuccess(parsed.data, effects);
}

/** Every tool the loaded plugins contribute, by name (a name is unique: `api.registerTool` refuses a second). */
export function contributedTools(
  plugins: readonly LoadedPlugin[],
  options: { pluginData: ToolPluginData; events: readonly DeclaredEvent[] },
): Map<string, Tool> {
  const tools = new Map<string, Tool>();
  for (const plugin of plugins)
    for (const contribution of plugin.manifest.contributes.tools)
      if (!tools.has(contribution.name)) tools.set(contribution.name, pluginTool({ plugin, contribution, ...options }));
  return tools;
}

/**
 * The value with every object key whose value is `undefined` left out, as `JSON.stringify` leaves
 * it out (`{ summary: undefined }` is `{}`): a plugin may return an optional field unset.
 * Anything else that is not JSON (a function, a class instance, NaN) is still refused.
 */
function withoutUndefinedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutUndefinedKeys);
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return value;
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => (v === undefined ? [] : [[k, withoutUndefinedKeys(v)]])));
}
