import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrateToLatest, openDatabase } from '../database';
import { FileMediaStore, mediaStoreFor, TableMediaStore } from '../media';
import { mediaStoreConformance } from './media-store-conformance';

mediaStoreConformance({
  name: 'files (embedded default)',
  async open() {
    const dir = mkdtempSync(join(tmpdir(), 'covel-media-'));
    return { store: new FileMediaStore(dir), close: async () => rmSync(dir, { recursive: true, force: true }) };
  },
});

mediaStoreConformance({
  name: 'table on PGlite',
  async open() {
    const database = await openDatabase({ kind: 'pglite' });
    await migrateToLatest(database.db);
    return { store: new TableMediaStore(database.db), close: () => database.close() };
  },
});

describe('mediaStoreFor', () => {
  it('files beside the embedded database on disk; the table for PostgreSQL and an in-memory PGlite', async () => {
    const database = await openDatabase({ kind: 'pglite' });
    try {
      expect(mediaStoreFor(database, { filesDir: '/data' })).toBeInstanceOf(FileMediaStore);
      expect(mediaStoreFor(database, {})).toBeInstanceOf(TableMediaStore);
      expect(mediaStoreFor({ ...database, kind: 'postgres' }, { filesDir: '/data' })).toBeInstanceOf(TableMediaStore);
    } finally {
      await database.close();
    }
  });
});
