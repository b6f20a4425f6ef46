import type {
  Kysely,
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  Transaction,
  UnknownRow,
} from 'kysely';

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

/** The SQL texts `run` sends through `db`, as compiled, in one transaction: to show that a write's text does not change with its rows. */
export async function sqlTextsOf<DB>(db: Kysely<DB>, run: (trx: Transaction<DB>) => Promise<unknown>): Promise<string[]> {
  const texts: string[] = [];
  const recording = db.withPlugin({
    transformQuery: ({ node, queryId }: PluginTransformQueryArgs) => {
      texts.push(db.getExecutor().compileQuery(node, queryId).sql);
      return node;
    },
    transformResult: ({ result }: PluginTransformResultArgs) => Promise.resolve(result),
  } satisfies KyselyPlugin);
  await recording.transaction().execute(run);
  return texts;
}
