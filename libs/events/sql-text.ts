import { type CompiledQuery, createQueryId, IdentifierNode, type Kysely, type OperationNode, RawNode, ValueNode } from 'kysely';

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

/** An identifier as kysely's PostgreSQL compiler writes it (`sql.id`): in double quotes, each `"` doubled. */
export const quotedIdentifier = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * The SQL text of a tree of kysely's `sql` template fragments (`RawNode`s holding values, identifiers
 * (`sql.id`) and other such fragments, `sql.join`) as kysely's PostgreSQL compiler writes it, each
 * value pushed onto `parameters` as its `$n` (n counting on from the values already there). Kysely's
 * compiler, generic over every node of its query builder, walks such a tree at several times the cost
 * (issue 33: the inline projections' writes of every append). Undefined when the tree holds any other
 * node (a literal `sql.lit`, a `sql.ref`, a query builder's): nothing is pushed then, the caller
 * compiles it with kysely.
 */
export function rawFragmentText(node: OperationNode, parameters: unknown[]): string | undefined {
  const start = parameters.length;
  const text = fragmentText(node, parameters);
  if (text === undefined) parameters.length = start;
  return text;
}

function fragmentText(node: OperationNode, parameters: unknown[]): string | undefined {
  if (RawNode.is(node)) {
    const { sqlFragments, parameters: inner } = node;
    let text = '';
    for (let i = 0; i < sqlFragments.length; i++) {
      text += sqlFragments[i];
      if (i < inner.length) {
        const part = fragmentText(inner[i], parameters);
        if (part === undefined) return undefined;
        text += part;
      }
    }
    return text;
  }
  if (ValueNode.is(node)) return node.immediate ? undefined : `$${parameters.push(node.value)}`;
  if (IdentifierNode.is(node)) return quotedIdentifier(node.name);
  return undefined;
}
