import { type Compilable, type CompiledQuery, createQueryId, type Kysely, type QueryResult } from 'kysely';

/**
 * A statement kysely builds and compiles once, on its first run; each later run sends the same SQL
 * text with its own parameters. Building and compiling a short statement costs more CPU than
 * sending it (issue 33: kysely was 7–8 % of a worker's CPU per turn), and a hot statement's shape
 * never changes between runs.
 *
 * `build` gets a placeholder for each named parameter (`p.name`) and must use each placeholder as
 * a value that kysely sends as a parameter (a column's value, one side of a comparison; never an
 * `in` list, a column name or a raw SQL fragment), once or more. Every other value in it is a
 * constant of the statement. The first compilation checks that each placeholder became a parameter
 * and appears nowhere in the SQL text. An instance with plugins is not precompiled (each run is
 * built and compiled, the plugins seeing it).
 */
export function precompiled<Db, P extends Record<string, unknown>, R = unknown>(
  names: readonly (keyof P & string)[],
  build: (db: Kysely<Db>, p: P) => Compilable<R>,
): (db: Kysely<Db>, params: P) => Promise<QueryResult<R>> {
  let statement: { compiled: CompiledQuery<R>; slots: readonly Slot[] } | undefined;
  return (db, params) => {
    // an instance with plugins (a test's statement counter) builds each run, as kysely does: a
    // plugin may rewrite the statement, and it sees each one
    if (db.getExecutor().plugins.length) return db.executeQuery<R>(build(db, params));
    statement ??= compileOnce(db, names, build);
    const { compiled, slots } = statement;
    const parameters = slots.map((slot) => (slot.name === undefined ? slot.value : params[slot.name]));
    return db.executeQuery<R>({ query: compiled.query, sql: compiled.sql, parameters, queryId: createQueryId() });
  };
}

type Slot = { name: string; value?: undefined } | { name?: undefined; value: unknown };

const PLACEHOLDER = '\u0000covel.precompiled.';

function compileOnce<Db, P extends Record<string, unknown>, R>(
  db: Kysely<Db>,
  names: readonly (keyof P & string)[],
  build: (db: Kysely<Db>, p: P) => Compilable<R>,
): { compiled: CompiledQuery<R>; slots: readonly Slot[] } {
  const placeholders = Object.fromEntries(names.map((name) => [name, `${PLACEHOLDER}${name}`])) as unknown as P;
  const compiled = build(db, placeholders).compile();
  const seen = new Set<string>();
  const slots = compiled.parameters.map((value): Slot => {
    if (typeof value === 'string' && value.startsWith(PLACEHOLDER)) {
      const name = value.slice(PLACEHOLDER.length);
      seen.add(name);
      return { name };
    }
    return { value };
  });
  const wrong = names.filter((name) => !seen.has(name));
  if (wrong.length || compiled.sql.includes(PLACEHOLDER))
    throw new Error(`precompiled: each placeholder must be a parameter of the statement (not so: ${wrong.join(', ') || 'a placeholder in the SQL text'})`);
  return { compiled, slots };
}
