import { migrateToLatest, openDatabase, type OpenDatabase } from '../../libs/events';
import { runStatementRowsCase, statementRowsCases } from '../../libs/events/projections/inline/test/statement-rows';
import { createTestDatabase } from '../support/stack';

/**
 * The inline projections' writes made in the append's own statement (data-modifying CTEs) write
 * the rows `applyBatch` writes (a rebuild of the session), on the real PostgreSQL (the same cases
 * run on PGlite in `libs/events/projections/inline/inline-sql.test.ts`).
 */
describe('inline projection writes in the append’s statement (real PostgreSQL)', () => {
  let database: { url: string; drop(): Promise<void> };
  let open: OpenDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    open = await openDatabase({ kind: 'postgres', url: database.url, poolSize: 2 });
    await migrateToLatest(open.db);
  });
  afterAll(async () => {
    await open.close();
    await database.drop();
  });

  describe.each(['append', 'catchingUp'] as const)('through %s', (via) => {
    it.each(statementRowsCases.map((c) => [c.name, c] as const))('given a session, when %s in one statement each, then the rows of a rebuild', async (_, c) => {
      const { appended, rebuilt, oneStatement } = await runStatementRowsCase(open.db, c, via);
      expect(oneStatement.every(Boolean)).toBe(true);
      expect(appended.executions.length + appended.turn_messages.length).toBeGreaterThan(0);
      expect(appended).toEqual(rebuilt);
    });
  });
});
