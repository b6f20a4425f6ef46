import { type CompiledQuery, createQueryId, type Kysely, RawNode } from 'kysely';

/**
 * A statement whose SQL text is written, not built with kysely (issue 33: building and compiling a
 * statement of many fragments on each run costs more CPU than sending it), its parameters numbered
 * `$1...` in `text`. The executor's plugins (a test's statement counter, its recorder of texts) see
 * it (`transformQuery`) as they see a statement kysely compiles, but what they answer is dropped:
 * `text` is what runs, so a plugin that rewrites queries (CamelCasePlugin, WithSchemaPlugin...) has
 * no effect on it. Run it with `executeQuery`.
 */
export function textStatement<R, DB = unknown>(executor: Kysely<DB>, text: string, parameters: readonly unknown[]): CompiledQuery<R> {
  const query = RawNode.createWithSql(text);
  const queryId = createQueryId();
  const plugged = executor.getExecutor();
  if (plugged.plugins.length) plugged.transformQuery(query, queryId);
  return { query, sql: text, parameters, queryId };
}
