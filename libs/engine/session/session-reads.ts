import { type LoadedWorld, type Locale, promptLocaleOf } from '../../plugins-sdk';
import { BoundedMemo } from '../../memo';
import { SessionJournal } from '../journal/journal';
import type { PluginSettings } from '../plugin-host/plugin-settings';
import type { EventStore } from '../../events';
import type { RawBuilder } from 'kysely';
import type { WorldLoader } from '../catalog/world-catalog';
import type { EngineMetrics } from '../metrics';

/** A session of a tenant (a job, a session): the journal's read is the tenant's only. */
export interface SessionRef {
  tenantId: string;
  sessionId: string;
}

/**
 * The session's execution journal, rebuilt from its events: from the earliest pending input on
 * (a finished execution before it is not in it). A stale `executions` view only makes the read
 * start earlier, never later: the journal itself is always exact. With `preferences`, the same
 * statement brings the player's last preferences change before the suffix: the journal then
 * tells the preferences before any of its versions (`SessionJournal.preferencesBefore`) with no
 * read of its own.
 */
export async function loadSessionJournal(
  deps: { store: EventStore; metrics?: Pick<EngineMetrics, 'heard'> },
  session: SessionRef,
  options: { preferences?: boolean } = {},
): Promise<SessionJournal> {
  return (await readSessionJournal(deps, session, options)).journal;
}

/**
 * `loadSessionJournal`; with `alongside` (one value read from the session's views, e.g.
 * `historyViewJson`), that value too, read in the same statement and snapshot as the journal.
 */
export async function readSessionJournal(
  deps: { store: EventStore; metrics?: Pick<EngineMetrics, 'heard'> },
  session: SessionRef,
  options: { preferences?: boolean; alongside?: RawBuilder<unknown> } = {},
): Promise<{ journal: SessionJournal; alongside?: unknown }> {
  const read = await deps.store.readPendingSuffix<'session.preferences-changed@1'>(session.tenantId, session.sessionId, {
    ...(options.preferences ? { lastBefore: 'session.preferences-changed@1' as const } : {}),
    ...(options.alongside === undefined ? {} : { alongside: options.alongside }),
  });
  // the metrics take a committed turn's timeline from these events and this process's appends after them
  deps.metrics?.heard(read.events);
  const journal = new SessionJournal(read.events, read.after);
  if (options.preferences && read.events.length > 0) journal.knowPreferencesAtStart(read.lastBefore?.data ?? null);
  return { journal, ...(options.alongside === undefined ? {} : { alongside: read.alongside }) };
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
  /**
   * A branch's root: the first ancestor that is not a branch, whose id keys the branch's prompt
   * cache (`RuntimeRequestInputs.cacheSessionId`). Absent: the session is not a branch.
   */
  rootSessionId?: string;
}

/** Where a branch comes from (`session.branched@1`, its first event). */
export interface SessionBranchOrigin {
  parentSessionId: string;
  atTurnId: string;
  parentVersion: number;
  /** The first ancestor that is not a branch. */
  rootSessionId: string;
}

/**
 * What a session's `session.created@1` says: its first event, or its second after a branch's
 * `session.branched@1` (null: the stream starts with neither).
 */
export interface SessionCreated {
  tenantId: string;
  locale: string;
  languageName?: string;
  worldId: string | null;
  /** The revision of the tenant's world it started on (a branch: the one its parent ran at the branch); absent: a built-in world. */
  worldRevision?: number;
  pluginSettings: PluginSettings;
  plugins: readonly string[] | null;
  /** Present for a branch. */
  branch?: SessionBranchOrigin;
}

/** Sessions whose `session.created` was read (an event never changes): a read per turn saved. */
const CREATED_CACHE_SIZE = 10_000;
const createdCache = new BoundedMemo<string, SessionCreated | null>({ maxEntries: CREATED_CACHE_SIZE });

/**
 * The session's `session.created@1`, read once per process (a stream not started yet is read again
 * next time). A session's log starts with it, or, for a branch, with `session.branched@1` and it
 * right after (one append): the first two events are read in one query.
 */
export async function readSessionCreated(deps: { store: EventStore }, sessionId: string): Promise<SessionCreated | null> {
  let created = createdCache.get(sessionId);
  if (created === undefined) {
    const head = await deps.store.readStream(sessionId, 0, 2);
    const [first] = head;
    const origin = first?.type === 'session.branched@1' ? first : null;
    const event = origin ? head[1] : first;
    created =
      event?.type === 'session.created@1'
        ? {
            tenantId: event.tenantId,
            locale: event.data.locale,
            ...(event.data.languageName === undefined ? {} : { languageName: event.data.languageName }),
            worldId: event.data.worldId,
            ...(event.data.worldRevision === undefined ? {} : { worldRevision: event.data.worldRevision }),
            pluginSettings: event.data.pluginSettings ?? {},
            plugins: event.data.plugins ?? null,
            ...(origin
              ? {
                  branch: {
                    parentSessionId: origin.data.parentSessionId,
                    atTurnId: origin.data.atTurnId,
                    parentVersion: origin.data.parentVersion,
                    rootSessionId: origin.data.rootSessionId ?? origin.data.parentSessionId,
                  },
                }
              : {}),
          }
        : null;
    if (first !== undefined) createdCache.set(sessionId, created);
  }
  return created;
}

/**
 * The session's locale, world, plugin settings and plugins, from its `session.created@1` (and a
 * branch's root, from its `session.branched@1`). The world is
 * the revision in effect `before` a stream version (an execution's: before its input, so every
 * request of the execution and its rebuild read the same): the one it started on, or the last
 * `session.world-revised@1` before it. Without `before`: the latest.
 */
export async function loadSessionSettings(
  deps: { store: EventStore; worlds: WorldLoader },
  sessionId: string,
  options: { before?: number } = {},
): Promise<SessionSettings> {
  const created = await readSessionCreated(deps, sessionId);
  if (created === null) return { locale: 'en', world: null, pluginSettings: {}, plugins: null };
  const { worldId } = created;
  const revision = created.worldRevision === undefined ? undefined : await worldRevisionBefore(deps, sessionId, created.worldRevision, options.before);
  return {
    locale: promptLocaleOf(created.locale),
    ...(created.languageName === undefined ? {} : { languageName: created.languageName }),
    world: worldId ? await deps.worlds.load({ tenantId: created.tenantId, worldId, ...(revision === undefined ? {} : { revision }) }) : null,
    pluginSettings: created.pluginSettings,
    plugins: created.plugins,
    ...(created.branch ? { rootSessionId: created.branch.rootSessionId } : {}),
  };
}

/** Past any stream version (the column is a 32-bit integer). */
const LAST_VERSION = 2 ** 31 - 1;

/** Revisions already read, by session and version (what the log holds before a version never changes). */
const revisionCache = new BoundedMemo<string, number>({ maxEntries: CREATED_CACHE_SIZE });

/** The world revision a session runs before `version`: its last `session.world-revised@1` before it, else the one it started on. */
export async function worldRevisionBefore(deps: { store: EventStore }, sessionId: string, started: number, before: number | undefined): Promise<number> {
  const key = before === undefined ? null : `${sessionId}@${before}`;
  const cached = key === null ? undefined : revisionCache.get(key);
  if (cached !== undefined) return cached;
  const moved = await deps.store.lastOfType(sessionId, 'session.world-revised@1', before ?? LAST_VERSION);
  const revision = moved?.data.toRevision ?? started;
  if (key !== null) revisionCache.set(key, revision);
  return revision;
}
