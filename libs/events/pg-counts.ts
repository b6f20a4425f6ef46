import type { PoolClient } from 'pg';
import { BoundedMemo } from '../memo';

/**
 * Process-wide counts of the PostgreSQL statements this process sends through its pools, and of the
 * transactions they make (`covel_pg_statements_total`, `covel_pg_transactions_total`): a hook on
 * each pooled client's `query`, installed by `openDatabase` (PGlite and LISTEN connections are not
 * counted). A transaction is a BEGIN … COMMIT/ROLLBACK, or one statement outside one (autocommit),
 * as PostgreSQL's `pg_stat_database` xact_commit + xact_rollback count them.
 */
export interface PgCountsSnapshot {
  /** Statements by `statementLabel` (BEGIN and COMMIT included). */
  statements: ReadonlyMap<string, number>;
  transactions: number;
}

/** Distinct statement labels kept; a label beyond them is counted as `other` (labels stay bounded). */
export const MAX_STATEMENT_LABELS = 256;
/** Code points of a statement's normalised text kept as its label. */
export const STATEMENT_LABEL_LENGTH = 60;

/**
 * Counts by label, at most `max` distinct labels (the rest under `other`): a Prometheus label set
 * that cannot grow without bound.
 */
export class BoundedTally {
  private readonly counts = new Map<string, number>();
  constructor(private readonly max: number) {}

  add(label: string, n = 1): void {
    const key = this.counts.has(label) || this.counts.size < this.max ? label : 'other';
    this.counts.set(key, (this.counts.get(key) ?? 0) + n);
  }

  snapshot(): ReadonlyMap<string, number> {
    return new Map(this.counts);
  }
}

const statements = new BoundedTally(MAX_STATEMENT_LABELS);
let transactions = 0;

export function pgCounts(): PgCountsSnapshot {
  return { statements: statements.snapshot(), transactions };
}

/**
 * A statement's label: whitespace collapsed, parameters (`$1`) as `$n`, number literals as `?`,
 * the first `STATEMENT_LABEL_LENGTH` code points.
 */
export function statementLabel(sql: string): string {
  const normalised = sql
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/\$\d+/g, '$n')
    .replace(/\b\d+\b/g, '?');
  return Array.from(normalised).slice(0, STATEMENT_LABEL_LENGTH).join('');
}

/** What a statement does to a connection's transaction. */
export function transactionEffect(sql: string): 'begin' | 'end' | 'inside' {
  const head = sql.trimStart().slice(0, 32).toLowerCase();
  if (/^(begin|start transaction)\b/.test(head)) return 'begin';
  if (/^rollback\s+to\b/.test(head)) return 'inside';
  if (/^(commit|rollback|end|abort)\b/.test(head)) return 'end';
  return 'inside';
}

/** Statement texts whose label and transaction effect are kept (`statementFacts`); past it the oldest is forgotten. */
export const STATEMENT_FACTS_KEPT = 512;
/** Longer texts (a multi-row insert, say) are labelled each time, not kept. */
const STATEMENT_FACTS_MAX_TEXT = 4096;

interface StatementFacts {
  label: string;
  effect: 'begin' | 'end' | 'inside';
}

/**
 * `statementLabel` and `transactionEffect` of a text, memoised by the text: a process sends the same
 * few dozen statement texts over and over, and the label's regular expressions were a visible share
 * of a turn's CPU (issue 33). Bounded: at most `STATEMENT_FACTS_KEPT` texts, the oldest forgotten first.
 */
export class StatementFactsMemo {
  private readonly facts: BoundedMemo<string, StatementFacts>;
  constructor(kept = STATEMENT_FACTS_KEPT) {
    this.facts = new BoundedMemo({ maxEntries: kept });
  }

  of(sql: string): StatementFacts {
    const known = this.facts.get(sql);
    if (known) return known;
    const facts = { label: statementLabel(sql), effect: transactionEffect(sql) };
    if (sql.length <= STATEMENT_FACTS_MAX_TEXT) this.facts.set(sql, facts);
    return facts;
  }

  get size(): number {
    return this.facts.size;
  }
}

const memo = new StatementFactsMemo();

const COUNTED = Symbol('covel.pgCounted');

/** Wraps `client.query` (once per client) so each statement it sends is counted. */
export function countPgClient(client: PoolClient): void {
  const target = client as PoolClient & { [COUNTED]?: true };
  if (target[COUNTED]) return;
  target[COUNTED] = true;
  let inTransaction = false;
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (...args: unknown[]) => {
    const first = args[0];
    const text = typeof first === 'string' ? first : typeof (first as { text?: unknown } | null)?.text === 'string' ? (first as { text: string }).text : null;
    if (text !== null) {
      const { label, effect } = memo.of(text);
      statements.add(label);
      if (effect === 'begin') inTransaction = true;
      else if (effect === 'end') {
        if (inTransaction) transactions++;
        inTransaction = false;
      } else if (!inTransaction) transactions++;
    }
    return query(...args);
  };
}
