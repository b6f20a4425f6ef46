import { migrateToLatest, openDatabase, TableMediaStore } from '../../libs/events';
import { mediaStoreConformance } from '../../libs/events/test/media-store-conformance';
import { createTestDatabase } from '../support/stack';

/** The MediaStore port's conformance suite on the real PostgreSQL (the deployments' driver). */
mediaStoreConformance({
  name: 'table on PostgreSQL',
  async open() {
    const database = await createTestDatabase();
    const open = await openDatabase({ kind: 'postgres', url: database.url });
    await migrateToLatest(open.db);
    return {
      store: new TableMediaStore(open.db),
      async close() {
        await open.close();
        await database.drop();
      },
    };
  },
});
