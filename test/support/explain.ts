import { CompiledQuery, type Kysely } from 'kysely';

/** A node of a plan as `explain (format json)` gives it (the fields the EXPLAIN tests read). */
export type PlanNode = {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
};

/** The plan of a compiled statement (`analyze`: run too, with its actual rows). */
export async function explain<Db>(
  db: Kysely<Db>,
  compiled: { sql: string; parameters: readonly unknown[] },
  options: { analyze?: boolean } = {},
): Promise<PlanNode> {
  const result = await db.executeQuery<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
    CompiledQuery.raw(`explain (${options.analyze ? 'analyze, ' : ''}format json) ${compiled.sql}`, [...compiled.parameters]),
  );
  return result.rows[0]['QUERY PLAN'][0].Plan;
}

/** A plan's nodes, the root first, depth first. */
export function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}
