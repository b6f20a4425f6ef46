import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';

/**
 * A Kysely plugin that counts the statements run and the rows the database returned through it
 * (`db.withPlugin(counter)`): to show how many statements a read takes and how many rows it brings back.
 */
export class QueryCounter implements KyselyPlugin {
  queries = 0;
  rows = 0;

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.queries++;
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    this.rows += args.result.rows.length;
    return args.result;
  }
}
