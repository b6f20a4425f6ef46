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

/**
 * The plan of a compiled statement (`analyze`: run too, with its actual rows). `generic`: the plan a
 * prepared statement may settle on after its first five runs (`plan_cache_mode = force_generic_plan`, the
 * parameters unknown to the planner), as the engine's named statements are planned; else the plan
 * for these parameter values.
 */
export async function explain<Db>(
  db: Kysely<Db>,
  compiled: { sql: string; parameters: readonly unknown[] },
  options: { analyze?: boolean; generic?: boolean } = {},
): Promise<PlanNode> {
  const verb = `explain (${options.analyze ? 'analyze, ' : ''}format json)`;
  if (options.generic) return explainGeneric(db, compiled, verb);
  const result = await db.executeQuery<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(CompiledQuery.raw(`${verb} ${compiled.sql}`, [...compiled.parameters]));
  return result.rows[0]['QUERY PLAN'][0].Plan;
}

async function explainGeneric<Db>(db: Kysely<Db>, compiled: { sql: string; parameters: readonly unknown[] }, verb: string): Promise<PlanNode> {
  return db.transaction().execute(async (trx) => {
    await trx.executeQuery(CompiledQuery.raw(`set local plan_cache_mode = force_generic_plan`));
    await trx.executeQuery(CompiledQuery.raw(`prepare explained as ${compiled.sql}`));
    try {
      const args = compiled.parameters.length === 0 ? '' : `(${compiled.parameters.map(literal).join(', ')})`;
      const result = await trx.executeQuery<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(CompiledQuery.raw(`${verb} execute explained${args}`));
      return result.rows[0]['QUERY PLAN'][0].Plan;
    } finally {
      // a prepared statement outlives its transaction
      await trx.executeQuery(CompiledQuery.raw('deallocate explained'));
    }
  });
}

const quoted = (text: string) => `'${text.replace(/'/g, "''")}'`;

/** An element of an array's text form: NULL, or double-quoted with `"` and `\\` escaped. */
function arrayElement(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'bigint' && typeof value !== 'boolean') {
    throw new Error(`explain: no array element literal for ${JSON.stringify(value)}`);
  }
  return `"${String(value).replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** A parameter written as an SQL literal (the types the EXPLAIN tests send). */
function literal(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (typeof value === 'string') return quoted(value);
  // an array as its text ('{"a","b"}', untyped): the statement's cast of the parameter gives it its type
  if (Array.isArray(value)) return quoted(`{${value.map(arrayElement).join(',')}}`);
  throw new Error(`explain: no literal for the parameter ${JSON.stringify(value)}`);
}

/** A plan's nodes, the root first, depth first. */
export function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}
