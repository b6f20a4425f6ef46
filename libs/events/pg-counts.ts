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
/** Texts up to this long are kept by their whole text; a longer one by its head (`factsKey`). */
const STATEMENT_FACTS_HEAD = 256;
/** A longer key (a text without whitespace past its head) is labelled each time, not kept. */
const STATEMENT_FACTS_MAX_TEXT = 4096;

interface StatementFacts {
  label: string;
  effect: 'begin' | 'end' | 'inside';
}

/** Kept facts of a text, and whether they hold for every longer text it is the head of (`factsKey`). */
interface KeptFacts {
  facts: StatementFacts;
  /** Its normalised text has `STATEMENT_LABEL_LENGTH` code points or more. */
  full: boolean;
}

const isSpace = (code: number) => (code <= 32 ? code === 32 || (code >= 9 && code <= 13) : /\s/.test(String.fromCharCode(code)));

/**
 * The head of a long text that decides its facts: the text up to its first run of whitespace at or
 * after `STATEMENT_FACTS_HEAD` characters (the whole text when it is not longer, or has none).
 * Cut where whitespace starts, the head normalises (`statementLabel`) to a prefix of what the whole
 * text does: the collapsing and trimming of whitespace and the replacing of `$1` and numbers never
 * reach across whitespace. So when the head's normalised text has a label's length, the label (and
 * the transaction effect, decided by the first 32 characters) of the text is the head's.
 */
export function factsKey(sql: string): string {
  if (sql.length <= STATEMENT_FACTS_HEAD) return sql;
  for (let i = STATEMENT_FACTS_HEAD; i < sql.length; i++) {
    if (isSpace(sql.charCodeAt(i)) && !isSpace(sql.charCodeAt(i - 1))) return sql.slice(0, i);
  }
  return sql;
}

/**
 * `statementLabel` and `transactionEffect` of a text, memoised by the text, or by its head when it
 * is long (`factsKey`: the statements of an append with rows and projections are kilobytes, and
 * finding one by its whole text hashed it all each time, re-labelling those past the memo's bound
 * of length): a process sends the same few dozen statement texts over and over, and the label's
 * regular expressions were a visible share of a turn's CPU (issue 33). Bounded: at most
 * `STATEMENT_FACTS_KEPT` texts, the oldest forgotten first.
 */
export class StatementFactsMemo {
  private readonly facts: BoundedMemo<string, KeptFacts>;
  constructor(kept = STATEMENT_FACTS_KEPT) {
    this.facts = new BoundedMemo({ maxEntries: kept });
  }

  of(sql: string): StatementFacts {
    const key = factsKey(sql);
    const known = this.facts.get(key);
    // a head's facts are the whole text's when its label is complete
    if (known && (key === sql || known.full)) return known.facts;
    const label = statementLabel(key);
    const kept = { facts: { label, effect: transactionEffect(key) }, full: Array.from(label).length >= STATEMENT_LABEL_LENGTH };
    if (key.length <= STATEMENT_FACTS_MAX_TEXT) this.facts.set(key, kept);
    if (key === sql || kept.full) return kept.facts;
    return { label: statementLabel(sql), effect: transactionEffect(sql) };
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
