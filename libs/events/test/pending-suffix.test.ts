import { EventStore, executionsProjection, migrateToLatest, type NewEvent, openDatabase, type OpenDatabase } from '..';

const created = (sessionId: string): NewEvent => ({ type: 'session.created@1', data: { sessionId, worldId: null, locale: 'en' } });
// execution ids are unique across the log (the view's key): the test's sessions number theirs from 1
let sequence = 0;
const ids = new Map<number, number>();
const input = (n: number): NewEvent => {
  ids.set(n, ++sequence);
  return { type: 'player-input.submitted@1', data: { executionId: `e${sequence}`, turnId: `u${sequence}`, messageId: `m${sequence}`, text: `input ${n}` } };
};
const failed = (n: number): NewEvent => ({
  type: 'execution.failed@1',
  data: { executionId: `e${ids.get(n)}`, turnId: `u${ids.get(n)}`, attempt: 0, error: { code: 'X', message: 'gone' } },
});

/** The journal's read (readPendingSuffix) with the `executions` view applied inline, as the engine's store does. */
describe('readPendingSuffix (PGlite)', () => {
  let open: OpenDatabase;
  let store: EventStore;
  beforeAll(async () => {
    open = await openDatabase({ kind: 'pglite' });
    await migrateToLatest(open.db);
    store = new EventStore(open.db, { inline: [executionsProjection] });
  });
  afterAll(() => open.close());

  const appendAll = async (streamId: string, events: NewEvent[]) => {
    let version = await store.streamVersion(streamId);
    for (const event of events) version = (await store.append({ tenantId: 't1', streamId, expectedVersion: version, events: [event] })).version;
  };
  const read = async (streamId: string, tenantId = 't1') => {
    const { after, events } = await store.readPendingSuffix(tenantId, streamId);
    return { after, versions: events.map((e) => e.streamVersion) };
  };

  it('from the earliest pending input on, whatever ended before it', async () => {
    await appendAll('s-pending', [created('s-pending'), input(1), failed(1), input(2), input(3)]);
    expect(await read('s-pending')).toEqual({ after: 3, versions: [4, 5] });
  });

  it('none pending: from the latest input on (the execution that just ended), not every turn the session had', async () => {
    await appendAll('s-ended', [created('s-ended'), input(1), failed(1), input(2), failed(2), input(3), failed(3)]);
    expect(await read('s-ended')).toEqual({ after: 5, versions: [6, 7] });
  });

  it('the whole stream when the view holds none of its inputs (a session without any, or rows not built yet)', async () => {
    await appendAll('s-new', [created('s-new')]);
    expect(await read('s-new')).toEqual({ after: 0, versions: [1] });
    // appended without the inline view: `executions` has no row of this session
    const bare = new EventStore(open.db);
    await bare.append({ tenantId: 't1', streamId: 's-bare', expectedVersion: 0, events: [created('s-bare'), input(7), input(8)] });
    expect(await read('s-bare')).toEqual({ after: 0, versions: [1, 2, 3] });
    expect(await read('s-unknown')).toEqual({ after: 0, versions: [] });
  });

  it("reads the tenant's session only: another tenant's id reads nothing (nor the last event before the suffix)", async () => {
    await appendAll('s-tenant', [created('s-tenant'), input(1), failed(1), input(2)]);
    expect(await read('s-tenant')).toEqual({ after: 3, versions: [4] });
    expect(await read('s-tenant', 't2')).toEqual({ after: 0, versions: [] });
    const other = await store.readPendingSuffix('t2', 's-tenant', { lastBefore: 'player-input.submitted@1' });
    expect({ events: other.events, lastBefore: other.lastBefore }).toEqual({ events: [], lastBefore: null });
    expect((await store.readPendingSuffix('t1', 's-tenant', { lastBefore: 'player-input.submitted@1' })).lastBefore?.streamVersion).toBe(2);
  });

  it('the last event of a type before the suffix: the latest of several, none of the suffix', async () => {
    await appendAll('s-before', [created('s-before'), input(1), failed(1), input(2), failed(2), input(3), failed(3), input(4)]);
    const inputs = await store.readPendingSuffix('t1', 's-before', { lastBefore: 'player-input.submitted@1' });
    expect({ after: inputs.after, before: inputs.lastBefore?.streamVersion }).toEqual({ after: 7, before: 6 });
    expect((await store.readPendingSuffix('t1', 's-before', { lastBefore: 'execution.failed@1' })).lastBefore?.streamVersion).toBe(7);
    expect((await store.readPendingSuffix('t1', 's-before', { lastBefore: 'session.created@1' })).lastBefore?.streamVersion).toBe(1);
    expect((await store.readPendingSuffix('t1', 's-before', { lastBefore: 'session.preferences-changed@1' })).lastBefore).toBeNull();
  });
});
