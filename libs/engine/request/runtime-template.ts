import { type ExecutionOutput, type HistoryMessage, renderTemplate, templateVariables } from '../../context';
import type { LoadedPlugin, LoadedWorld, Locale } from '../../plugins-sdk';
import { composeSettings, type PluginSettings } from '../plugin-host/plugin-settings';

/**
 * This turn's number counted from the turns of a history (before any history transform). The
 * worker and the rebuild pass the count of all committed turns (the history statistics,
 * `turnNumber`), compacted ones included; this count of the messages given is the fallback.
 */
export function turnNumberOf(history: readonly HistoryMessage[]): number {
  return new Set(history.map((m) => m.turnId)).size + 1;
}

/** What a runtime's body is rendered from: every value derives from the session's events. */
export interface RuntimeBodySources {
  sessionId: string;
  locale: Locale;
  /** The runtime's localized body (the registry generation the execution captured). */
  body: string;
  plugin: LoadedPlugin;
  /** Position of the runtime's stage; null: after all stages. */
  stageIndex: number | null;
  history: readonly HistoryMessage[];
  /** `{{ session.turnNumber }}`: committed turns + 1, compacted ones counted (default: `turnNumberOf(history)`). */
  turnNumber?: number;
  playerInput: { text: string };
  /** The form values of the latest player input (`player.lastFormValues`); `{}` until inputs carry forms. */
  lastFormValues?: unknown;
  outputs: readonly ExecutionOutput[];
  world: LoadedWorld | null;
  /** The player's configuration of each plugin (session settings). */
  pluginSettings?: PluginSettings;
}

/**
 * `{{ inputs.<pluginId>.<runtimeId>.<field> }}`: the structured outputs of this execution's earlier
 * stages (never the runtime's own stage: its parallel runtimes are not settled), each parsed as
 * JSON; an output that is not a JSON object is not offered. Typed `io.inputs` bindings are a
 * separate block (`<runtime-inputs>`), data that is never interpolated.
 */
export function earlierStructuredOutputs(outputs: readonly ExecutionOutput[], stageIndex: number | null): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const o of outputs) {
    if (o.outputKind !== 'structured' || o.stageIndex === null) continue;
    if (stageIndex !== null && o.stageIndex >= stageIndex) continue;
    const value = parseObject(o.text);
    if (value === undefined) continue;
    const runtimes = Object.hasOwn(out, o.pluginId) ? out[o.pluginId] : define(out, o.pluginId, {});
    define(runtimes, o.runtimeId, value);
  }
  return out;
}

function define<T>(record: Record<string, T>, key: string, value: T): T {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
  return value;
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The runtime's body with its `{{ variables }}` (spec §4) interpolated once. Only the runtime's
 * own body is rendered: static segments, dynamic segments and input blocks are data, never
 * interpolated.
 */
export function renderRuntimeBody(sources: RuntimeBodySources): string {
  if (!sources.body.includes('{{')) return sources.body;
  const pluginId = sources.plugin.manifest.id;
  const configured = sources.pluginSettings && Object.hasOwn(sources.pluginSettings, pluginId) ? sources.pluginSettings[pluginId] : undefined;
  const variables = templateVariables({
    locale: sources.locale,
    session: { id: sources.sessionId, turnNumber: sources.turnNumber ?? turnNumberOf(sources.history) },
    player: { message: sources.playerInput.text, lastFormValues: sources.lastFormValues ?? {} },
    world: sources.world,
    inputs: earlierStructuredOutputs(sources.outputs, sources.stageIndex),
    settings: { declared: sources.plugin.manifest.contributes.settings, values: composeSettings(sources.plugin, configured) },
  });
  return renderTemplate(sources.body, variables);
}
