import { randomUUID } from 'node:crypto';
import { migrateToLatest, type OpenDatabase, openDatabase } from '../database';
import { EventStore } from '../event-store';
import { InheritedMedia, TableMediaStore } from '../media';

/** A branch reads the media of the messages it inherited from the session that generated them (issue 30). */
describe('InheritedMedia', () => {
  let database: OpenDatabase;
  let store: EventStore;
  let media: InheritedMedia;
  beforeAll(async () => {
    database = await openDatabase({ kind: 'pglite' });
    await migrateToLatest(database.db);
    store = new EventStore(database.db);
    media = new InheritedMedia(new TableMediaStore(database.db), async (sessionId) => (await store.readStream(sessionId, 0, 1))[0]);
  }, 120_000);
  afterAll(() => database.close());

  const branch = async (tenantId: string, parentSessionId: string) => {
    const sessionId = randomUUID();
    await store.append({
      tenantId,
      streamId: sessionId,
      expectedVersion: 0,
      events: [{ type: 'session.branched@1', data: { parentSessionId, atTurnId: randomUUID(), parentVersion: 1, by: `tenant:${tenantId}` } }],
    });
    return sessionId;
  };

  it('a branch of a branch finds its root’s image; a session that is not a branch, or another tenant, does not', async () => {
    const [tenantId, root] = ['t-media', randomUUID()];
    await store.append({
      tenantId,
      streamId: root,
      expectedVersion: 0,
      events: [{ type: 'session.created@1', data: { sessionId: root, worldId: null, locale: 'en' } }],
    });
    const bytes = Buffer.from('a picture 🖼️');
    const mediaId = await media.put({ tenantId, sessionId: root, mimeType: 'image/png', bytes, meta: { caption: '灯塔' } });
    const child = await branch(tenantId, root);
    const grandchild = await branch(tenantId, child);
    expect((await media.get({ tenantId, sessionId: grandchild, mediaId }))?.bytes).toEqual(bytes);
    expect((await media.get({ tenantId, sessionId: child, mediaId }))?.meta).toEqual({ caption: '灯塔' });
    const stranger = randomUUID();
    await store.append({
      tenantId,
      streamId: stranger,
      expectedVersion: 0,
      events: [{ type: 'session.created@1', data: { sessionId: stranger, worldId: null, locale: 'en' } }],
    });
    expect(await media.get({ tenantId, sessionId: stranger, mediaId })).toBeNull();
    expect(await media.get({ tenantId: 'another-tenant', sessionId: grandchild, mediaId })).toBeNull();
  });
});
