import { type LoadedWorld, type Locale, promptLocaleOf } from '../../plugins-sdk';
import { SessionJournal } from '../journal';
import type { TurnDeps } from './deps';

/**
 * The session's execution journal, rebuilt from its events: from the earliest pending input on
 * (a finished execution before it is not in it). A stale `executions` view only makes the read
 * start earlier, never later: the journal itself is always exact.
 */
export async function loadSessionJournal(deps: Pick<TurnDeps, 'store' | 'readModels'>, sessionId: string): Promise<SessionJournal> {
  const from = await deps.readModels.earliestPendingVersion(sessionId);
  const after = from === null ? 0 : from - 1;
  return new SessionJournal(await deps.store.readStream(sessionId, after), after);
}

export interface SessionSettings {
  locale: Locale;
  world: LoadedWorld | null;
}

/** The session's locale and world, from its first event. */
export async function loadSessionSettings(deps: Pick<TurnDeps, 'store' | 'worlds'>, sessionId: string): Promise<SessionSettings> {
  const [first] = await deps.store.readStream(sessionId, 0, 1);
  if (first?.type !== 'session.created@1') return { locale: 'en', world: null };
  const worldId = first.data.worldId;
  return { locale: promptLocaleOf(first.data.locale), world: worldId && deps.worlds.has(worldId) ? deps.worlds.get(worldId) : null };
}
