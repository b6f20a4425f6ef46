import type { EventCatalogEntry } from '../../context';
import type { LoadedPlugin } from '../../plugins-sdk';
import type { CatalogRuntime, RuntimeCatalog } from '../catalog/runtime-catalog';
import { isReadableSchema, usesReferences } from './json-schema';

/** One topic of the catalogue: a loaded plugin's `contributes.events` entry and how its payload schema reads. */
export interface DeclaredEvent {
  topic: string;
  description: string;
  pluginId: string;
  payload: Record<string, unknown>;
  /** ajv compiles it: the payload is checked against it; otherwise only JSON is checked and the catalogue shows the unavailable marker. */
  readable: boolean;
  /** It uses `$ref` / `$defs`: the tool definition shows a plain object and the catalogue the complete schema. */
  usesReferences: boolean;
}

/** Every topic the loaded plugins declare, ordered by topic (a stable order for the prompt and the tool definition). */
export function declaredEvents(plugins: readonly LoadedPlugin[]): DeclaredEvent[] {
  return plugins
    .flatMap((p) =>
      p.manifest.contributes.events.map((e) => ({
        topic: e.topic,
        description: e.description,
        pluginId: p.manifest.id,
        payload: e.payload,
        readable: isReadableSchema(e.payload),
        usesReferences: usesReferences(e.payload),
      })),
    )
    .sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
}

const requiredOf = (schema: Record<string, unknown>): string[] =>
  Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [];

/**
 * Spec §6: the `<available-events>` catalogue keeps each topic's description and required-field
 * summary; the complete payload schema only where references force the tool definition to a plain
 * object; an unreadable schema only the unavailable marker.
 */
export function eventCatalogEntries(events: readonly DeclaredEvent[]): EventCatalogEntry[] {
  return events.map((e) => ({
    topic: e.topic,
    description: e.description,
    requiredFields: e.readable ? requiredOf(e.payload) : [],
    ...(!e.readable ? { schemaUnavailable: true } : e.usesReferences ? { payloadSchema: JSON.stringify(e.payload) } : {}),
  }));
}

/**
 * The catalogue a runtime's prompt lists (`eventCatalog` of buildContext): the loaded plugins'
 * topics when the runtime declares `agent.advertiseEvents`, none otherwise. Derived from the
 * catalog generation only, so a request rebuild gets the same block.
 */
export function advertisedEvents(catalog: RuntimeCatalog, runtime: CatalogRuntime): EventCatalogEntry[] {
  if (!runtime.manifest.agent?.advertiseEvents) return [];
  return eventCatalogEntries(declaredEvents(catalog.plugins));
}
