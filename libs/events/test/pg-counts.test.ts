import { BoundedTally, StatementFactsMemo, statementLabel, transactionEffect } from '../pg-counts';

describe('statementLabel', () => {
  it('collapses whitespace, writes parameters as $n and numbers as ?, keeps 60 code points', () => {
    expect(statementLabel('select *\n   from "events"\twhere "stream_id" = $12 limit 100')).toBe('select * from "events" where "stream_id" = $n limit ?');
    expect(statementLabel('insert into covel_bench_ab12 values (1)')).toBe('insert into covel_bench_ab12 values (?)');
    const long = `select '${'é'.repeat(80)}'`;
    expect(Array.from(statementLabel(long))).toHaveLength(60);
    // never half of a surrogate pair
    expect(statementLabel(`select '${'😀'.repeat(70)}'`)).toBe(`select '${'😀'.repeat(52)}`);
  });
});

describe('transactionEffect', () => {
  it('tells BEGIN and its ends from statements and savepoints', () => {
    expect(['begin', 'BEGIN ISOLATION LEVEL SERIALIZABLE', 'start transaction'].map(transactionEffect)).toEqual(['begin', 'begin', 'begin']);
    expect(['commit', 'ROLLBACK', 'end', 'abort'].map(transactionEffect)).toEqual(['end', 'end', 'end', 'end']);
    expect(['rollback to savepoint s1', 'savepoint s1', 'release savepoint s1', 'select 1', 'beginning'].map(transactionEffect)).toEqual([
      'inside',
      'inside',
      'inside',
      'inside',
      'inside',
    ]);
  });
});

describe('BoundedTally', () => {
  it('counts by label, and past its bound counts new labels as other', () => {
    const tally = new BoundedTally(2);
    for (const label of ['a', 'b', 'a', 'c', 'd', 'b']) tally.add(label);
    expect(Object.fromEntries(tally.snapshot())).toEqual({ a: 2, b: 2, other: 2 });
  });
});

describe('StatementFactsMemo', () => {
  it('gives a text the same label and effect as computing them, keeps at most its bound of texts', () => {
    const memo = new StatementFactsMemo(2);
    const texts = ['select *\n from "events" where "stream_id" = $1', 'BEGIN', 'commit', 'select *\n from "events" where "stream_id" = $1', 'select 7'];
    for (const text of texts) {
      expect(memo.of(text)).toEqual({ label: statementLabel(text), effect: transactionEffect(text) });
      expect(memo.size).toBeLessThanOrEqual(2);
    }
    // a text seen again is answered from the memo (the same object)
    const memo2 = new StatementFactsMemo(8);
    expect(memo2.of('select 1')).toBe(memo2.of('select 1'));
    // a long text is labelled, not kept
    const long = `select '${'x'.repeat(5000)}'`;
    expect(memo2.of(long).label).toBe(statementLabel(long));
    expect(memo2.size).toBe(1);
  });
});
