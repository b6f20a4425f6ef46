import { migrateToLatest, openDatabase, type OpenDatabase } from '../..';
import { runStatementRowsCase, statementRowsCases } from './test/statement-rows';

/**
 * The inline projections' writes made in the append's own statement (data-modifying CTEs) write
 * the rows `applyBatch` writes (a rebuild of the session), on PGlite (the embedded database);
 * `test/integration/inline-statement-rows.test.ts` runs the same cases on PostgreSQL.
 */
describe('inline projection writes in the append’s statement (PGlite)', () => {
  let open: OpenDatabase;
  beforeAll(async () => {
    open = await openDatabase({ kind: 'pglite' });
    await migrateToLatest(open.db);
  }, 120_000);
  afterAll(() => open.close());

  describe.each(['append', 'catchingUp'] as const)('through %s', (via) => {
    it.each(statementRowsCases.map((c) => [c.name, c] as const))('given a session, when %s in one statement each, then the rows of a rebuild', async (_, c) => {
      const { appended, rebuilt, oneStatement } = await runStatementRowsCase(open.db, c, via);
      expect(oneStatement.every(Boolean)).toBe(true);
      expect(appended.executions.length + appended.turn_messages.length).toBeGreaterThan(0);
      expect(appended).toEqual(rebuilt);
    });
  });
});
