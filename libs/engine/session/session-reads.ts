import { type LoadedWorld, type Locale, promptLocaleOf } from '../../plugins-sdk';
import { SessionJournal } from '../journal/journal';
import type { PluginSettings } from '../plugin-host/plugin-settings';
import type { EventStore } from '../../events';
import type { WorldCatalog } from '../catalog/world-catalog';

/**
 * The session's execution journal, rebuilt from its events: from the earliest pending input on
 * (a finished execution before it is not in it). A stale `executions` view only makes the read
 * start earlier, never later: the journal itself is always exact.
 */
export async function loadSessionJournal(deps: { store: EventStore }, sessionId: string): Promise<SessionJournal> {
  const { after, events } = await deps.store.readPendingSuffix(sessionId);
  return new SessionJournal(events, after);
}

export interface SessionSettings {
  locale: Locale;
  /** How [LANGUAGE] names the session's language (`session.created@1` `languageName`); none in sessions recorded before. */
  languageName?: string;
  world: LoadedWorld | null;
  /** The player's configuration of plugins, as the session was created with it. */
  pluginSettings: PluginSettings;
  /** The plugins the session runs (`session.created@1`); null: the plugins enabled by default. */
  plugins: readonly string[] | null;
}

/** What a session's `session.created@1` says (null: the stream does not start with one). */
interface SessionCreated {
  locale: string;
  languageName?: string;
  worldId: string | null;
  pluginSettings: PluginSettings;
  plugins: readonly string[] | null;
}

/** Sessions whose `session.created` was read (an event never changes): a read per turn saved. */
const createdCache = new Map<string, SessionCreated | null>();
const CREATED_CACHE_SIZE = 10_000;

/** The session's `session.created@1`, read once per process (a stream not started yet is read again next time). */
export async function readSessionCreated(deps: { store: EventStore }, sessionId: string): Promise<SessionCreated | null> {
  let created = createdCache.get(sessionId);
  if (created === undefined) {
    const [first] = await deps.store.readStream(sessionId, 0, 1);
    created =
      first?.type === 'session.created@1'
        ? {
            locale: first.data.locale,
            ...(first.data.languageName === undefined ? {} : { languageName: first.data.languageName }),
            worldId: first.data.worldId,
            pluginSettings: first.data.pluginSettings ?? {},
            plugins: first.data.plugins ?? null,
          }
        : null;
    if (first !== undefined) {
      if (createdCache.size >= CREATED_CACHE_SIZE) createdCache.delete(createdCache.keys().next().value!);
      createdCache.set(sessionId, created);
    }
  }
  return created;
}

/** The session's locale, world, plugin settings and plugins, from its first event. */
export async function loadSessionSettings(deps: { store: EventStore; worlds: WorldCatalog }, sessionId: string): Promise<SessionSettings> {
  const created = await readSessionCreated(deps, sessionId);
  if (created === null) return { locale: 'en', world: null, pluginSettings: {}, plugins: null };
  const { worldId } = created;
  return {
    locale: promptLocaleOf(created.locale),
    ...(created.languageName === undefined ? {} : { languageName: created.languageName }),
    world: worldId && deps.worlds.has(worldId) ? deps.worlds.get(worldId) : null,
    pluginSettings: created.pluginSettings,
    plugins: created.plugins,
  };
}
