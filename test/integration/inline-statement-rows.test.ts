import { runStatementRowsCase, statementRowsCases } from '../../libs/events/projections/inline/test/statement-rows';
import { useMigratedDatabase } from '../support/migrated-database';

/**
 * The inline projections' writes made in the append's own statement (data-modifying CTEs) write
 * the rows `applyBatch` writes (a rebuild of the session), on the real PostgreSQL (the same cases
 * run on PGlite in `libs/events/projections/inline/inline-sql.test.ts`).
 */
describe('inline projection writes in the append’s statement (real PostgreSQL)', () => {
  const database = useMigratedDatabase();

  describe.each(['append', 'catchingUp'] as const)('through %s', (via) => {
    it.each(statementRowsCases.map((c) => [c.name, c] as const))('given a session, when %s in one statement each, then the rows of a rebuild', async (_, c) => {
      const { appended, rebuilt, oneStatement } = await runStatementRowsCase(database.open.db, c, via);
      expect(oneStatement.every(Boolean)).toBe(true);
      expect(appended.executions.length + appended.turn_messages.length).toBeGreaterThan(0);
      expect(appended).toEqual(rebuilt);
    });
  });
});
