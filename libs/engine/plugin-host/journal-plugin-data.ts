import type { JsonValue, PluginDataReader, PluginDataRow, PluginDataScope, PluginDataSnapshot, SelfDataView, StoredEvent } from '../../events';
import { BoundedMemo } from '../../memo';

/** What reads plugin data: the store (`PluginDataStore`), or the store seen from a journal (`pluginDataAt`). */
export interface PluginDataScopes {
  scope(scope: PluginDataScope): PluginDataReader;
  /** Every plugin's data of the session, bounded, in one read (`PluginDataStore.session`); without it, each read is the scope's. */
  session?(scope: { tenantId: string; sessionId: string }): Promise<PluginDataSnapshot>;
}

/**
 * The most sessions `readingSessions` holds. It holds the sessions (tenant and session id) whose runs
 * read the session's plugin data snapshot in this process: `pluginDataAt` adds the session at each
 * snapshot read. A turn step of a session it holds, before a stage it runs inline, brings the
 * snapshot with its read of the log (`readsSessionPluginData`, `offerSessionSnapshot`), so the
 * stage's runs skip the snapshot's own statement. It is the process's, not a journal's: each read of the log makes a new journal, and a
 * turn's first step reads the log before any run of that turn reads plugin data, so what tells that
 * step to bring it is what the session's earlier turns read here. Past the bound, the session read
 * least recently is forgotten: its next run reads the snapshot with a statement of its own, as in a
 * process that never saw it, and adds it again. A session it holds whose run needs no plugin data
 * still gets the snapshot with the step's read (more rows in that statement, bounded by
 * `SESSION_PLUGIN_DATA_BOUNDS`, no statement more); it is kept unused and changes no answer.
 */
export const SESSIONS_READING_PLUGIN_DATA = 10_000;
const readingSessions = new BoundedMemo<string, true>({ maxEntries: SESSIONS_READING_PLUGIN_DATA });
const sessionKey = (scope: { tenantId: string; sessionId: string }) => JSON.stringify([scope.tenantId, scope.sessionId]);

/**
 * Whether the runs of the session read its plugin data snapshot in this process before (a hook, a
 * tool, `io.selfData`): a turn step's read of the log then brings the snapshot in its own statement
 * (`offerSessionSnapshot`), instead of the first run's read after it.
 */
export function readsSessionPluginData(scope: { tenantId: string; sessionId: string }): boolean {
  return readingSessions.get(sessionKey(scope)) === true;
}

/**
 * A snapshot of the session's plugin data read in the same statement and snapshot as `journal`
 * (the turn step's read of the log): it holds exactly the plugin-data events the journal holds, so
 * it is the one the first read at the journal's `pluginDataVersion` would make (`pluginDataAt`),
 * and the reads at that version take it instead (kept as that read's would be).
 */
export function offerSessionSnapshot(
  store: PluginDataScopes,
  journal: JournalPluginData,
  scope: { tenantId: string; sessionId: string },
  snapshot: PluginDataSnapshot,
): void {
  const place = snapshotPlace(store, journal, scope);
  if (!place.memo.get(place.key)) keepSnapshot(place, store, scope, Promise.resolve(snapshot));
}

/** What `pluginDataAt` reads of a journal: its plugin-data version, and the plugin-data events it holds past an earlier one (`SessionJournal.pluginDataSince`). */
export interface JournalPluginData {
  readonly pluginDataVersion: number;
  pluginDataSince?(version: number): readonly StoredEvent[] | undefined;
}

/**
 * The session's snapshot at the journal's plugin-data version made in memory (issue 33: a statement
 * per stage that follows one writing plugin data, the pre-turn's world-init before the narrator's):
 * the latest snapshot kept at an earlier version of this journal (its own at 0, or the store's
 * shared one above 0) with the plugin-data events the journal took in since applied, as the
 * `plugin_data` projection applied them (`PluginDataSnapshot.after`). That is what a read at the
 * journal's version would give: the projection is the fold of those events, applied as they were
 * appended. Undefined (read the store) when no such snapshot is kept, or the journal cannot tell
 * what came since: an event that folds the story again (a failure, a cancel, a revert: the
 * projection folds the session from the log then), or a snapshot from before the journal's start.
 */
function derivedSnapshot(
  store: PluginDataScopes,
  journal: JournalPluginData,
  scope: { tenantId: string; sessionId: string },
): Promise<PluginDataSnapshot> | undefined {
  if (!journal.pluginDataSince) return undefined;
  const own = readsOf(journal).snapshots.get(JSON.stringify([scope.tenantId, scope.sessionId, 0]));
  const shared = latestSnapshots.get(store)?.get(sessionKey(scope));
  const bases = [...(shared && shared.version < journal.pluginDataVersion ? [shared] : []), ...(own ? [{ version: 0, snapshot: own }] : [])];
  for (const base of bases) {
    const events = journal.pluginDataSince(base.version);
    if (events) return base.snapshot.then((snapshot) => snapshot.after(events));
  }
  return undefined;
}

/** The latest snapshot above version 0 kept of each session (`derivedSnapshot`'s base), by store. */
const latestSnapshots = new WeakMap<PluginDataScopes, BoundedMemo<string, { version: number; snapshot: Promise<PluginDataSnapshot> }>>();

/** Keeps `snapshot` at `key` of `memo`, and as the session's latest at a version above 0. */
function keepSnapshot(
  place: { memo: BoundedMemo<string, Promise<PluginDataSnapshot>>; key: string; version: number },
  store: PluginDataScopes,
  scope: { tenantId: string; sessionId: string },
  snapshot: Promise<PluginDataSnapshot>,
): void {
  place.memo.set(place.key, snapshot);
  if (place.version === 0) return;
  const latest = latestSnapshots.get(store) ?? new BoundedMemo({ maxEntries: SHARED_PLUGIN_DATA_SNAPSHOTS });
  latestSnapshots.set(store, latest);
  const session = sessionKey(scope);
  if ((latest.get(session)?.version ?? 0) <= place.version) latest.set(session, { version: place.version, snapshot });
  snapshot.catch(() => {
    if (latest.get(session)?.snapshot === snapshot) latest.delete(session);
  });
}

/** Where `pluginDataAt` keeps the session's snapshot at the journal's version: shared above version 0, the journal's own at 0. */
function snapshotPlace(
  store: PluginDataScopes,
  journal: { readonly pluginDataVersion: number },
  scope: { tenantId: string; sessionId: string },
): { memo: BoundedMemo<string, Promise<PluginDataSnapshot>>; key: string; version: number } {
  const version = journal.pluginDataVersion;
  let memo = readsOf(journal).snapshots;
  if (version > 0) {
    memo = sharedSnapshots.get(store) ?? new BoundedMemo({ maxEntries: SHARED_PLUGIN_DATA_SNAPSHOTS });
    sharedSnapshots.set(store, memo);
  }
  return { memo, key: JSON.stringify([scope.tenantId, scope.sessionId, version]), version };
}

function readsOf(journal: object): JournalReads {
  let reads = journalReads.get(journal);
  if (!reads) {
    reads = {
      answers: new BoundedMemo({ maxEntries: JOURNAL_PLUGIN_DATA_READS }),
      readers: new BoundedMemo({ maxEntries: 64 }),
      snapshots: new BoundedMemo({ maxEntries: 4 }),
    };
    journalReads.set(journal, reads);
  }
  return reads;
}

/** Reads one journal's runs keep (each a namespace read, or one key's); the oldest forgotten first. */
export const JOURNAL_PLUGIN_DATA_READS = 512;

/** The reads made at one journal: answers by scope, read and plugin-data version, the store's reader of each scope, the session snapshots by version. */
interface JournalReads {
  answers: BoundedMemo<string, Promise<unknown>>;
  readers: BoundedMemo<string, PluginDataReader>;
  snapshots: BoundedMemo<string, Promise<PluginDataSnapshot>>;
}

const journalReads = new WeakMap<object, JournalReads>();

/** Session snapshots at a plugin-data version above 0 the journals of one store share: that many, the oldest forgotten first. */
export const SHARED_PLUGIN_DATA_SNAPSHOTS = 16;

const sharedSnapshots = new WeakMap<PluginDataScopes, BoundedMemo<string, Promise<PluginDataSnapshot>>>();

/**
 * The plugin data store as the runs sharing one journal read it (a turn job's step and the runtimes
 * of its stage, run inline: issue 33): a read asked again at the same `pluginDataVersion` of the
 * journal (the stream version of the session's last plugin-data event the journal holds) is answered
 * from the first one, not the store; any plugin-data event the journal takes in (a sibling's append,
 * a catch-up) moves the version, and the next read goes to the store again.
 *
 * Why that holds: plugin data is a projection of the session's events (only `plugin-data.written@1`
 * and `plugin-data.deleted@1` change it), and the journal takes an event in only after the append
 * that stored it committed, so a read made while the journal is at version V answers with what the
 * store held at V or later. A write of another process the journal has not caught up with may be in
 * a read or not, as without this; a run that must not miss it (a request's `io.selfData`) takes the
 * version before its read and checks it at its append (`selfDataUnchanged`), after the catch-up.
 *
 * The first read at a version reads the whole session's plugin data, every plugin's, in one statement
 * (`store.session`, bounded: issue 33, a statement and a transaction per key or namespace before),
 * and every read of that version of a namespace the snapshot holds whole is answered from it: a
 * stage's hooks, tools, functions and `io.selfData` of every plugin take one statement between two
 * plugin-data events of the journal. A namespace beyond the snapshot's bounds is read from the store
 * as before, one statement per read (`get`s of a tick together). A snapshot at a version V above 0
 * serves every journal of the store at V (a turn job's and its runtime jobs' in one process): it
 * holds every plugin-data event up to V, and a journal at V has taken in none after it, so it answers
 * as a read of the store would (a write the journal has not caught up with in it or not, as above).
 * At 0 (no plugin-data event in the journal: none in the session, or none in the suffix it read) it
 * serves that journal only.
 *
 * Keyed by tenant, session and plugin with the read (each scope's reads apart), kept per journal
 * object (a journal read from a later suffix of the log starts with nothing), bounded. Every caller
 * gets its own copy of the value (a plugin may change what it read). A failed read is not kept.
 */
export function pluginDataAt(store: PluginDataScopes, journal: JournalPluginData): PluginDataScopes {
  const { answers, readers } = readsOf(journal);
  // the session's snapshot at the journal's version now (one statement per version), or null: no such read
  const snapshotOf = (scope: PluginDataScope): Promise<PluginDataSnapshot> | null => {
    if (!store.session) return null;
    // the session's turn steps bring it with their read of the log from now on (`readsSessionPluginData`)
    readingSessions.set(sessionKey(scope), true);
    const place = snapshotPlace(store, journal, scope);
    const { memo, key } = place;
    let snapshot = memo.get(key);
    if (!snapshot) {
      const asked = derivedSnapshot(store, journal, scope) ?? store.session({ tenantId: scope.tenantId, sessionId: scope.sessionId });
      snapshot = asked;
      keepSnapshot(place, store, scope, asked);
      asked.catch(() => {
        if (memo.get(key) === asked) memo.delete(key);
      });
    }
    return snapshot;
  };
  return {
    scope(scope) {
      const scopeKey = JSON.stringify([scope.tenantId, scope.sessionId, scope.pluginId]);
      let reader = readers.get(scopeKey);
      if (!reader) readers.set(scopeKey, (reader = store.scope({ tenantId: scope.tenantId, sessionId: scope.sessionId, pluginId: scope.pluginId })));
      const data = reader;
      const once = <T>(read: readonly unknown[], ask: () => Promise<T>): Promise<T> => {
        const key = JSON.stringify([scopeKey, journal.pluginDataVersion, ...read]);
        let answer = answers.get(key) as Promise<T> | undefined;
        if (!answer) {
          const asked = ask();
          answer = asked;
          answers.set(key, asked);
          asked.catch(() => {
            if (answers.get(key) === asked) answers.delete(key);
          });
        }
        return answer.then((value) => structuredClone(value));
      };
      // the snapshot's answer when it holds the namespace whole, else the store's (asked at the same version)
      const held = <T>(namespace: string, fromSnapshot: (snapshot: PluginDataSnapshot) => T, fromStore: () => Promise<T>): Promise<T> => {
        const snapshot = snapshotOf(scope);
        if (!snapshot) return fromStore();
        return snapshot.then((s) => (s.covers(scope.pluginId, namespace) ? fromSnapshot(s) : fromStore()));
      };
      const { pluginId } = scope;
      return {
        get: (namespace, key): Promise<JsonValue | undefined> =>
          once(['get', namespace, key], () =>
            held(
              namespace,
              (s) => s.get(pluginId, namespace, key),
              () => data.get(namespace, key),
            ),
          ),
        list: (namespace, options = {}): Promise<PluginDataRow[]> =>
          once(['list', namespace, options.limit ?? null], () =>
            held(
              namespace,
              (s) => s.list(pluginId, namespace, options),
              () => data.list(namespace, options),
            ),
          ),
        selfData: (namespace, options = {}): Promise<SelfDataView> =>
          once(['selfData', namespace, options.limit ?? null], () =>
            held(
              namespace,
              (s) => s.selfData(pluginId, namespace, options),
              () => data.selfData(namespace, options),
            ),
          ),
      };
    },
  };
}
