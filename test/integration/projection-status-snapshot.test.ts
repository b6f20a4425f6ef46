import {
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
  sql,
} from 'kysely';
import { createAsyncProjector } from '../../libs/engine';
import { useMigratedDatabase } from '../support/migrated-database';
import { countingDatabase } from '../support/statement-counter';

/** Runs `between` once, right after the first raw statement's result (the status's shard rows) and before the next statement. */
class BetweenStatements implements KyselyPlugin {
  private target: unknown = null;
  constructor(private readonly between: () => Promise<void>) {}
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (this.target === null && args.node.kind === 'RawNode') this.target = args.queryId;
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (args.queryId === this.target) await this.between();
    return args.result;
  }
}

describe('an async projection status on the real PostgreSQL', () => {
  const database = useMigratedDatabase({ poolSize: 4 });

  it('with nothing database.open in quarantine, is one statement (no transaction); with an database.open record, the records of that projection only are read', async () => {
    const counting = countingDatabase(database.url);
    try {
      const projector = createAsyncProjector(counting.db, { owner: 'w-count' });
      await projector.status(); // the shard rows
      await sql`delete from projection_quarantine`.execute(database.open.db);
      counting.reset();
      const statuses = await projector.status();
      // before: a REPEATABLE READ transaction with the rows, one read of database.open records per projection and the counts (7 statements)
      expect({ statements: counting.statements.length, transactions: counting.statements.filter((s) => /^(begin|start transaction)/i.test(s)).length }).toEqual(
        {
          statements: 1,
          transactions: 0,
        },
      );
      expect(statuses.every((p) => p.quarantined.length === 0 && p.quarantinedOpen === 0)).toBe(true);
      await sql`insert into projection_quarantine (projection, shard, global_position, transaction_id, event_type, tenant_id, stream_id, error_code, error, attempts)
                values ('usage', 1, 9, '1', 'llm.responded@1', 't', 's', 'SyntaxError', 'x', 3)`.execute(database.open.db);
      counting.reset();
      const withOpen = await projector.status();
      expect(counting.statements.filter((s) => /^start transaction isolation level repeatable read read only/i.test(s))).toHaveLength(1);
      expect(counting.statements.filter((s) => /^select \* from "projection_quarantine"/.test(s))).toHaveLength(1);
      expect(withOpen.map((p) => [p.name, p.quarantined.length, p.quarantinedOpen, p.quarantinedTotal])).toEqual(
        projector.names.map((name) => (name === 'usage' ? [name, 1, 1, 1] : [name, 0, 0, 0])),
      );
      await sql`delete from projection_quarantine`.execute(database.open.db);
    } finally {
      await counting.close();
    }
  });

  it('is one snapshot: a quarantine committed while the status is read never shows up beside the failure it cleared', async () => {
    const shard = 3;
    await createAsyncProjector(database.open.db, { owner: 'w1' }).status(); // the shard rows
    await sql`update projection_shards set failing_since = now(), attempts = 2, failed_position = 7, failed_event_type = 'llm.calling@1',
              error_code = 'SyntaxError', last_error = 'x' where projection = 'prefix_reports' and shard = ${shard}`.execute(database.open.db);
    // what a quarantine commits (apply-batch.ts): the record, and the shard's failure cleared, in one transaction
    const quarantine = () =>
      database.open.db.transaction().execute(async (trx) => {
        await sql`insert into projection_quarantine (projection, shard, global_position, transaction_id, event_type, tenant_id, stream_id, error_code, error, attempts)
                  values ('prefix_reports', ${shard}, 7, '1', 'llm.calling@1', 't', 's', 'SyntaxError', 'x', 3)`.execute(trx);
        await sql`update projection_shards set failing_since = null, attempts = 0, failed_position = null, failed_event_type = null,
                  error_code = null, last_error = null where projection = 'prefix_reports' and shard = ${shard}`.execute(trx);
      });
    const reading = createAsyncProjector(database.open.db.withPlugin(new BetweenStatements(quarantine)), { owner: 'w1' });
    const [during] = (await reading.status()).filter((p) => p.name === 'prefix_reports');
    // as it was when the read began: failing, nothing quarantined yet (not: failing and quarantined)
    expect({ failing: during.failing, quarantined: during.quarantined.length, open: during.quarantinedOpen }).toEqual({ failing: 1, quarantined: 0, open: 0 });
    const [after] = (await reading.status()).filter((p) => p.name === 'prefix_reports');
    expect({ state: after.state, failing: after.failing, quarantined: after.quarantined.length, open: after.quarantinedOpen }).toEqual({
      state: 'running',
      failing: 0,
      quarantined: 1,
      open: 1,
    });
  });
});
