import { randomUUID } from 'node:crypto';
import { EventStore, inlineProjections, type NewEvent, ReadModels, type SessionPreferences } from '../../libs/events';
import { loadSessionJournal } from '../../libs/engine/session/session-reads';
import { loadRuntimeHistory } from '../../libs/engine/history/history-loader';
import type { CommittedMessage } from '../../libs/events/event-types';
import { executionPreferences, NO_PREFERENCES, preferencesBefore, preferencesKnown } from '../../libs/engine/preferences';
import { type CountedDatabase, countedDatabase, type CountingDatabase } from '../support/statement-counter';

const changed = (effort: 'low' | 'high'): NewEvent => ({
  type: 'session.preferences-changed@1',
  data: { preferences: { slots: { narrator: { reasoning: { enabled: true, effort } } } } },
});
const input = (executionId: string): NewEvent => ({
  type: 'player-input.submitted@1',
  data: { executionId, turnId: randomUUID(), messageId: randomUUID(), text: 'go' },
});
const slots = (effort: 'low' | 'high'): SessionPreferences => ({ slots: { narrator: { reasoning: { enabled: true, effort } } } });

/**
 * Reads a turn's worker makes on the real PostgreSQL (issue 33): the player's preferences an
 * execution runs with come with the journal's read, not from a read of their own each turn.
 */
describe('a turn’s reads on the real PostgreSQL', () => {
  let database: CountedDatabase;
  let counting: CountingDatabase;
  let store: EventStore;
  beforeAll(async () => {
    database = await countedDatabase();
    counting = database.counting;
    store = new EventStore(counting.db, { inline: inlineProjections });
  });
  afterAll(() => database.drop());

  /** A session: created, preferences `low`, input e1 (pending), preferences `high`, input e2 (pending). */
  async function session(options: { before?: boolean } = {}) {
    const sessionId = randomUUID();
    const e1 = randomUUID();
    const e2 = randomUUID();
    const head: NewEvent[] = [{ type: 'session.created@1', data: { sessionId, worldId: null, locale: 'en' } }];
    if (options.before !== false) head.push(changed('low'));
    await store.append({ tenantId: 't', streamId: sessionId, expectedVersion: 0, events: head });
    await store.appendAtHead({ tenantId: 't', streamId: sessionId, events: [input(e1)] });
    await store.appendAtHead({ tenantId: 't', streamId: sessionId, events: [changed('high')] });
    await store.appendAtHead({ tenantId: 't', streamId: sessionId, events: [input(e2)] });
    return { sessionId, e1, e2 };
  }

  it('the journal’s read brings the preferences before its first event: each execution’s preferences with no statement of their own, as the log holds them', async () => {
    for (const before of [true, false]) {
      const { sessionId, e1, e2 } = await session({ before });
      expect(preferencesKnown(sessionId, e1)).toBe(false);
      counting.reset();
      const journal = await loadSessionJournal({ store }, { tenantId: 't', sessionId }, { preferences: true });
      expect(counting.statements).toHaveLength(1);
      const first = journal.get(e1)!;
      const second = journal.get(e2)!;
      // the suffix starts at e1's input: its preferences are the change before the suffix (none, without one)
      expect(await executionPreferences(store, sessionId, first, journal)).toEqual(before ? slots('low') : NO_PREFERENCES);
      expect(await executionPreferences(store, sessionId, second, journal)).toEqual(slots('high'));
      expect(counting.statements).toHaveLength(1);
      expect(preferencesKnown(sessionId, e1)).toBe(true);
      // the same as a read of the log answers
      for (const version of [first.submittedVersion, second.submittedVersion]) {
        expect(journal.preferencesBefore(version)).toEqual(
          (await store.lastOfType(sessionId, 'session.preferences-changed@1', version))?.data.preferences ?? NO_PREFERENCES,
        );
      }
    }
  });

  it('a journal read without them cannot tell the preferences before its first change: read from the log', async () => {
    const { sessionId, e1 } = await session();
    const journal = await loadSessionJournal({ store }, { tenantId: 't', sessionId });
    const first = journal.get(e1)!;
    expect(journal.preferencesBefore(first.submittedVersion)).toBeUndefined();
    counting.reset();
    expect(await preferencesBefore(store, sessionId, first.submittedVersion, journal)).toEqual(slots('low'));
    expect(counting.statements).toHaveLength(1);
    expect(counting.statements[0]).toMatch(/"type" = \$3 order by "stream_version" desc limit \$4/);
  });

  it('a journal from the stream’s start knows them all; versions outside a journal are not answered from it', async () => {
    const { sessionId, e2 } = await session();
    const { SessionJournal } = await import('../../libs/engine/journal/journal');
    const whole = new SessionJournal(await store.readStream(sessionId));
    expect(whole.preferencesBefore(1)).toEqual(NO_PREFERENCES);
    expect(whole.preferencesBefore(3)).toEqual(slots('low'));
    expect(whole.preferencesBefore(whole.version + 1)).toEqual(slots('high'));
    expect(whole.preferencesBefore(whole.version + 2)).toBeUndefined();
    const suffix = await loadSessionJournal({ store }, { tenantId: 't', sessionId }, { preferences: true });
    expect(suffix.preferencesBefore(suffix.get(e2)!.submittedVersion - 3)).toBeUndefined();
  });

  it('a runtime’s history read brings the saved summaries in the same statement, as their own read gives them, tenant-scoped', async () => {
    const sessionId = randomUUID();
    const m = (n: number, session: string = sessionId) => `${session}-m${n}`;
    const message = (n: number, text: string, session: string): CommittedMessage =>
      n % 2
        ? { messageId: m(n, session), role: 'user', sourceType: 'player', pluginId: null, runtimeId: null, outputKind: null, text }
        : { messageId: m(n, session), role: 'assistant', sourceType: 'runtime', pluginId: 'narrator', runtimeId: 'story', outputKind: 'story', text };
    const commit = (n: number, session: string = sessionId): NewEvent => ({
      type: 'turn.committed@1',
      data: {
        executionId: randomUUID(),
        turnId: randomUUID(),
        attempt: 1,
        messages: [message(2 * n - 1, `p${n}`, session), message(2 * n, `s${n} 👨‍👩‍👧`, session)],
      },
    });
    const content = '摘要：他们在河边相遇 😀👨‍👩‍👧 — ملخص — "quoted" \\ back';
    await store.append({
      tenantId: 't',
      streamId: sessionId,
      expectedVersion: 0,
      events: [{ type: 'session.created@1', data: { sessionId, worldId: null, locale: 'en' } }],
    });
    for (const n of [1, 2, 3]) await store.appendAtHead({ tenantId: 't', streamId: sessionId, events: [commit(n)] });
    await store.appendAtHead({
      tenantId: 't',
      streamId: sessionId,
      events: [
        {
          type: 'history.compacted@1',
          data: {
            compactionId: randomUUID(),
            summaries: [
              { summaryId: `${sessionId}-a`, messageIds: [m(1)], replacesSummaryIds: [], content },
              { summaryId: `${sessionId}-b`, messageIds: [m(2)], replacesSummaryIds: [], content: 'two', truncated: true },
            ],
          },
        },
      ],
    });
    const readModels = new ReadModels(counting.db);
    for (const withCoverage of [false, true]) {
      counting.reset();
      const loaded = await loadRuntimeHistory(readModels, 't', sessionId, 100, { withCoverage });
      expect(counting.statements).toHaveLength(1);
      expect(loaded.summaries).toEqual(await readModels.summaries('t', sessionId, { withMessageIds: withCoverage }));
      expect(loaded.summaries.map((x) => x.content)).toEqual([content, 'two']);
      const view = await readModels.historyView('t', sessionId, { bound: 100, scan: 20 });
      expect(loaded.messages.map((x) => [x.messageId, x.text])).toEqual(view.uncompacted.map((x) => [x.messageId, x.text]));
      expect(loaded.stats).toEqual({ total: 6, compacted: 2, uncompacted: 4, turns: 3 });
    }
    expect((await loadRuntimeHistory(readModels, 't', sessionId, 100, { withCoverage: true })).summaries[1]).toEqual({
      id: `${sessionId}-b`,
      content: 'two',
      messageIds: [m(2)],
      truncated: true,
    });
    // over the bound: no rows, the summaries all the same
    const over = await readModels.historyView('t', sessionId, { bound: 1, scan: 20, summaries: {} });
    expect([over.overBound, over.summaries?.length]).toEqual([true, 2]);
    // another tenant reads none of it
    const other = await loadRuntimeHistory(readModels, 'other', sessionId, 100);
    expect([other.messages, other.summaries]).toEqual([[], []]);
    // no summaries yet: an empty list, from the same statement
    const fresh = randomUUID();
    await store.append({
      tenantId: 't',
      streamId: fresh,
      expectedVersion: 0,
      events: [{ type: 'session.created@1', data: { sessionId: fresh, worldId: null, locale: 'en' } }, commit(1, fresh)],
    });
    counting.reset();
    const first = await loadRuntimeHistory(readModels, 't', fresh, 100);
    expect(counting.statements).toHaveLength(1);
    expect([first.messages.length, first.summaries]).toEqual([2, []]);
  });
});
