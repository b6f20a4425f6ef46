import { randomUUID } from 'node:crypto';
import type { MediaStore } from '../media';

/** A MediaStore driver under test: a fresh store per suite. */
export interface MediaStoreDriver {
  name: string;
  open(): Promise<{ store: MediaStore; close(): Promise<void> }>;
}

const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

/**
 * The MediaStore port's semantics, the same for every driver: run by a unit test with the file
 * driver and the table driver on PGlite, and by an integration test with the table on PostgreSQL.
 */
export function mediaStoreConformance(driver: MediaStoreDriver): void {
  describe(`MediaStore conformance: ${driver.name}`, () => {
    let store: MediaStore;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ store, close } = await driver.open());
    }, 60_000);
    afterAll(() => close());
    const scope = () => ({ tenantId: `t-${randomUUID()}`, sessionId: randomUUID() });

    it('put then get: the same bytes, MIME type and meta; a new id when none is given', async () => {
      const s = scope();
      const mediaId = await store.put({ ...s, mimeType: 'image/png', bytes: png, meta: { caption: 'a red door 🚪', prompt: 'door' } });
      expect(mediaId).toMatch(/^[0-9a-f-]{36}$/);
      const got = await store.get({ ...s, mediaId });
      expect(got).toEqual({ mimeType: 'image/png', bytes: png, meta: { caption: 'a red door 🚪', prompt: 'door' } });
      expect(Buffer.isBuffer(got!.bytes)).toBe(true);
      const chosen = randomUUID();
      expect(await store.put({ ...s, mediaId: chosen, mimeType: 'audio/ogg', bytes: Buffer.alloc(0), meta: {} })).toBe(chosen);
      expect(await store.get({ ...s, mediaId: chosen })).toEqual({ mimeType: 'audio/ogg', bytes: Buffer.alloc(0), meta: {} });
    });

    it('every byte value survives, and a large item too', async () => {
      const s = scope();
      const all = Buffer.from(Array.from({ length: 256 * 4 }, (_, i) => i % 256));
      const big = Buffer.alloc(3_750_000, 0xab);
      const [a, b] = [
        await store.put({ ...s, mimeType: 'image/webp', bytes: all, meta: {} }),
        await store.put({ ...s, mimeType: 'image/png', bytes: big, meta: {} }),
      ];
      expect((await store.get({ ...s, mediaId: a }))!.bytes.equals(all)).toBe(true);
      expect((await store.get({ ...s, mediaId: b }))!.bytes.equals(big)).toBe(true);
    });

    it('tenant- and session-scoped: another tenant or another session of the same tenant cannot read it', async () => {
      const s = scope();
      const mediaId = await store.put({ ...s, mimeType: 'image/png', bytes: png, meta: { caption: 'secret' } });
      expect(await store.get({ tenantId: `t-${randomUUID()}`, sessionId: s.sessionId, mediaId })).toBeNull();
      expect(await store.get({ tenantId: s.tenantId, sessionId: randomUUID(), mediaId })).toBeNull();
      expect(await store.get({ ...s, mediaId: randomUUID() })).toBeNull();
      expect(await store.get({ ...s, mediaId })).not.toBeNull();
    });

    it('a second put of the same id keeps the first; the same id in another session is another item', async () => {
      const s = scope();
      const mediaId = randomUUID();
      await store.put({ ...s, mediaId, mimeType: 'image/png', bytes: png, meta: { caption: 'first' } });
      await store.put({ ...s, mediaId, mimeType: 'image/gif', bytes: Buffer.from('GIF89a'), meta: { caption: 'second' } });
      expect(await store.get({ ...s, mediaId })).toEqual({ mimeType: 'image/png', bytes: png, meta: { caption: 'first' } });
      const other = { ...s, sessionId: randomUUID() };
      await store.put({ ...other, mediaId, mimeType: 'image/gif', bytes: Buffer.from('GIF89a'), meta: {} });
      expect((await store.get({ ...other, mediaId }))!.mimeType).toBe('image/gif');
    });

    it('malformed references: a read finds nothing, a put is refused naming what is wrong', async () => {
      const s = scope();
      for (const mediaId of ['../../etc/passwd', '', 'not-a-uuid', `${randomUUID()}.json`]) expect(await store.get({ ...s, mediaId })).toBeNull();
      expect(await store.get({ tenantId: '..', sessionId: s.sessionId, mediaId: randomUUID() })).toBeNull();
      await expect(store.put({ ...s, mediaId: '../x', mimeType: 'image/png', bytes: png, meta: {} })).rejects.toThrow(/malformed media id/);
      await expect(store.put({ ...s, tenantId: '../t', mimeType: 'image/png', bytes: png, meta: {} })).rejects.toThrow(/malformed tenant id/);
      await expect(store.put({ ...s, mimeType: 'png', bytes: png, meta: {} })).rejects.toThrow(/malformed MIME type/);
    });
  });
}
