import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type RawBuilder, sql } from 'kysely';
import type { Database } from '../schema';
import { inlineProjections } from '../projections/sets';
import { inlineStatement } from '../projections/inline/inline-sql';
import { statementRowsCases, type Ids } from '../projections/inline/test/statement-rows';
import { compiledWritesText, insertedRow, writesText } from '../stream-lock';
import { rawFragmentText } from '../sql-text';

/** Compiles with kysely's PostgreSQL compiler, never runs anything. */
const db = new Kysely<Database>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (k) => new PostgresIntrospector(k),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

type Writes = { name: string; body: RawBuilder<unknown> }[];
const both = (writes: Writes) => {
  const [fast, compiled]: unknown[][] = [[], []];
  return { fast: { ...writesText(db, writes, fast), parameters: fast }, compiled: { ...compiledWritesText(db, writes, compiled), parameters: compiled } };
};

const ids: Ids = { sessionId: 's-1', execution: (n) => `e-${n}`, turn: (n) => `u-${n}` };

describe('the inline writes’ SQL text (`writesText`)', () => {
  it.each(statementRowsCases.map((c) => [c.name, c] as const))(
    'given %s, when its appends’ writes are written, then the text and parameters kysely compiles',
    (_, c) => {
      let compared = 0;
      for (const events of [...c.given(ids), ...c.when(ids)]) {
        const statement = inlineStatement(inlineProjections, { tenantId: 't', streamId: ids.sessionId }, events, insertedRow);
        if (!statement?.ctes.length) continue;
        const { fast, compiled } = both([...statement.ctes]);
        expect(fast).toEqual(compiled);
        compared++;
      }
      expect(compared).toBeGreaterThan(0);
    },
  );

  it('writes nested fragments, joins, identifiers with quotes and every kind of value as kysely does', () => {
    const inner = sql`select ${'a'}::text, ${sql.id('we"ird', 'col')} from ${insertedRow(2)} e`;
    const writes: Writes = [
      { name: 'w"1', body: sql`insert into t (x) ${inner} where y = any(${['p', 'q']}::text[]) and z = ${null} and n = ${3}` },
      { name: 'w2', body: sql`update t set j = ${JSON.stringify({ k: '$1' })}::jsonb where ${sql.join([1, 2, sql`${'x'}`])} and d = ${new Date(0)}` },
    ];
    const { fast, compiled } = both(writes);
    expect(fast).toEqual(compiled);
    // a fragment alone numbers its values on from those already there
    const parameters: unknown[] = ['before'];
    expect(rawFragmentText(inner.toOperationNode(), parameters)).toMatch(/^select \$2::text, .* \+ \$3::int\) e$/);
    expect(parameters).toEqual(['before', 'a', 3]);
  });

  it('given a write holding a node it does not write (sql.lit, sql.ref), then kysely compiles them all, and the same text', () => {
    const writes: Writes = [
      { name: 'a', body: sql`select ${'plain'}` },
      { name: 'b', body: sql`select ${sql.lit('lit')}, ${sql.ref('t.c')} from t where x = ${1}` },
    ];
    const parameters: unknown[] = [];
    expect(rawFragmentText(writes[1].body.toOperationNode(), parameters)).toBeUndefined();
    expect(parameters).toEqual([]);
    const { fast, compiled } = both(writes);
    expect(fast).toEqual(compiled);
    expect(fast.parameters).toEqual(['plain', 1]);
  });
});
