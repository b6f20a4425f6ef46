import { ConcurrencyError, type EventStore } from '../../events';
import { BoundedMemo } from '../../memo';
import { SessionNotFoundError } from '../errors';
import { applyPreferencesPatch, NO_PREFERENCES, type PreferencesPatch, samePreferences, type SessionPreferences } from './session-preferences';

const CHANGED = 'session.preferences-changed@1';

/** Answers already known, by session and version: what the log holds before a version never changes. */
const READ_CACHE_SIZE = 10_000;
const readCache = new BoundedMemo<string, SessionPreferences>({ maxEntries: READ_CACHE_SIZE });

/** The part of a session's journal this needs (`SessionJournal`): its answer, when it can tell alone. */
export interface PreferencesSource {
  preferencesBefore(version: number): SessionPreferences | undefined;
}

const cacheKey = (sessionId: string, version: number) => `${sessionId}@${version}`;

/** The input's version of executions whose preferences this process answered (`preferencesKnown`). */
const executionVersions = new BoundedMemo<string, number>({ maxEntries: READ_CACHE_SIZE });
const executionKey = (sessionId: string, executionId: string) => `${sessionId}/${executionId}`;

/**
 * True when this process knows the execution's preferences without a read: a job that has them
 * need not ask its journal read for them (`loadSessionJournal` with `preferences`).
 */
export function preferencesKnown(sessionId: string, executionId: string): boolean {
  const version = executionVersions.get(executionKey(sessionId, executionId));
  return version !== undefined && readCache.has(cacheKey(sessionId, version));
}

/**
 * The player's preferences as the log holds them before `version` (an execution's: before its
 * input, `ExecutionJournal.submittedVersion`): the last `session.preferences-changed@1` before it,
 * else none. Every request of the execution reads the same, a rebuild too. From this process's
 * answers, else from `journal` when it can tell (it holds the last change before `version`, or its
 * read brought the one before its start: `loadSessionJournal` with `preferences`), else read.
 */
export async function preferencesBefore(store: EventStore, sessionId: string, version: number, journal?: PreferencesSource): Promise<SessionPreferences> {
  const key = cacheKey(sessionId, version);
  const cached = readCache.get(key);
  if (cached) return cached;
  const preferences = journal?.preferencesBefore(version) ?? (await store.lastOfType(sessionId, CHANGED, version))?.data.preferences ?? NO_PREFERENCES;
  readCache.set(key, preferences);
  return preferences;
}

/** `preferencesBefore` the execution's input, remembered for `preferencesKnown`. */
export async function executionPreferences(
  store: EventStore,
  sessionId: string,
  execution: { executionId: string; submittedVersion: number },
  journal?: PreferencesSource,
): Promise<SessionPreferences> {
  const preferences = await preferencesBefore(store, sessionId, execution.submittedVersion, journal);
  const key = executionKey(sessionId, execution.executionId);
  if (!executionVersions.has(key)) executionVersions.set(key, execution.submittedVersion);
  return preferences;
}

export interface ChangePreferencesRequest {
  tenantId: string;
  sessionId: string;
  /** Validated by the caller (slot names against `llm.toml`'s, see `unknownSlotIssues`). */
  patch: PreferencesPatch;
}

/** How many times the append is tried again when other appends to the session come first. */
const MAX_APPEND_TRIES = 50;

/**
 * Applies a change to the session's preferences and appends the result as
 * `session.preferences-changed@1` at the version it was read at (another append first: read and
 * try again). A change that changes nothing appends nothing. Executions whose input comes after it
 * read the new preferences; those accepted before keep theirs. Another tenant's session: not found.
 */
export async function changeSessionPreferences(deps: { store: EventStore }, request: ChangePreferencesRequest): Promise<{ preferences: SessionPreferences }> {
  const { tenantId, sessionId, patch } = request;
  const head = await deps.store.streamHead(sessionId);
  if (head.tenantId !== tenantId) throw new SessionNotFoundError(sessionId);
  for (let tries = 0; ; tries++) {
    const version = tries === 0 ? head.version : await deps.store.streamVersion(sessionId);
    // everything up to `version` is fixed: the answer before `version + 1` can be cached
    const current = await preferencesBefore(deps.store, sessionId, version + 1);
    const preferences = applyPreferencesPatch(current, patch);
    if (samePreferences(current, preferences)) return { preferences };
    try {
      await deps.store.append({ tenantId, streamId: sessionId, expectedVersion: version, events: [{ type: CHANGED, data: { preferences } }] });
      return { preferences };
    } catch (error) {
      if (!(error instanceof ConcurrencyError) || tries >= MAX_APPEND_TRIES) throw error;
    }
  }
}
