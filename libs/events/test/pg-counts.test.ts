import { BoundedTally, factsKey, StatementFactsMemo, statementLabel, transactionEffect } from '../pg-counts';

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

  it('finds a long text by its head, with the facts of the whole text in every case', () => {
    const memo = new StatementFactsMemo(64);
    const head = `with w as (insert into "events" ("tenant_id", "stream_id") values ($1, $2) returning *) ${'select 1 '.repeat(20)}`;
    const long = (i: number) => `${head}union all select ${i} from "executions" where "session_id" = $${i}`;
    // texts that differ past their head are one entry, answered from it
    expect(memo.of(long(3))).toEqual({ label: statementLabel(long(3)), effect: 'inside' });
    expect(memo.of(long(4))).toBe(memo.of(long(3)));
    expect(memo.size).toBe(1);
    // texts whose head normalises short of a label (whitespace, numbers) or is cut in a number, a
    // parameter, a word: the whole text's facts, whatever was kept before under the same head
    const next = (() => {
      let state = 7;
      return () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
    })();
    const pieces = [
      'BEGIN',
      'commit',
      ' ',
      '\n\t ',
      '\u00a0',
      '\ufeff',
      ' '.repeat(300),
      '$1',
      '$12',
      '123',
      '12ab',
      'x9',
      'select',
      '"events"',
      '😀',
      '漢字',
      ';',
    ];
    for (let i = 0; i < 3000; i++) {
      let text = '';
      while (text.length < 200 + next() * 400) text += pieces[Math.floor(next() * pieces.length)];
      expect(memo.of(text)).toEqual({ label: statementLabel(text), effect: transactionEffect(text) });
      expect(memo.of(text.slice(0, 300))).toEqual({ label: statementLabel(text.slice(0, 300)), effect: transactionEffect(text.slice(0, 300)) });
    }
    // two texts of one head that normalises short of a label: each its own label, not the first one's
    const shortHead = `select${' '.repeat(300)}${'a'.repeat(10)}`;
    const [first, second] = [`${shortHead} from "events" where 1 = 1`, `${shortHead} from "executions" where 2 = 2`];
    expect(factsKey(first)).toBe(shortHead);
    expect(memo.of(first).label).toBe(statementLabel(first));
    expect(memo.of(second).label).toBe(statementLabel(second));
    expect(statementLabel(second)).not.toBe(statementLabel(first));
    // a head is cut where whitespace starts, at or past 256 characters
    expect(factsKey('s'.repeat(300))).toBe('s'.repeat(300));
    expect(factsKey(`${'s'.repeat(260)}  x`)).toBe('s'.repeat(260));
    expect(factsKey(`${'s '.repeat(200)}`)).toBe('s '.repeat(129).trimEnd());
  });
});
