import { BoundedMemo } from '../memo';
import { transactionEffect } from './pg-counts';

/**
 * When a statement text goes to PostgreSQL under a name (issue 33), the one policy of both drivers
 * (`pg-prepared.ts` on the pool's connections, `pglite-prepared.ts` on PGlite): only texts with
 * parameters of at most `PREPARED_MAX_TEXT` characters, named on their `PREPARE_AFTER_USES`th use
 * (a one-off, like a migration's, never is), at most `max` names a connection (then texts go
 * unnamed as before). A name PostgreSQL refuses to run again ("cached plan must not change result
 * type" after DDL, 0A000) is spoiled for good: the text goes unnamed from then on, sent once more
 * unnamed at once outside a transaction; inside one the error stands (the transaction is aborted
 * already) and the caller's retry sends it unnamed.
 */
export const PREPARE_AFTER_USES = 2;
export const PREPARED_MAX_TEXT = 16_384;
/** Texts whose uses are counted (the oldest counted is forgotten first). */
export const PREPARED_USES_KEPT = 512;

export interface PreparedNamingOptions {
  /** Names one connection makes at most (a spoiled or unparsable name counts too). */
  max: number;
  /** Uses counted across several connections (kept after one names a text, the others still count); absent: this connection's own. */
  sharedUses?: BoundedMemo<string, number>;
}

/** One connection's named statements (`S`: what a driver keeps of each) and its transaction. */
export class PreparedNaming<S> {
  private readonly uses: BoundedMemo<string, number>;
  /** Text → its statement; null: the name was spoiled (the text goes unnamed from then on). */
  private readonly named = new Map<string, S | null>();
  private made = 0;
  /** Between a BEGIN and its COMMIT or ROLLBACK (a statement that fails there cannot be sent again). */
  private inTransaction = false;

  constructor(private readonly options: PreparedNamingOptions) {
    this.uses = options.sharedUses ?? new BoundedMemo({ maxEntries: PREPARED_USES_KEPT });
  }

  /** How many texts run under a name now. */
  get size(): number {
    let n = 0;
    for (const statement of this.named.values()) if (statement !== null) n++;
    return n;
  }

  /** A statement sent without parameters (BEGIN, COMMIT and the like): what this connection's transaction is. */
  noteUnparameterised(text: string): void {
    const effect = transactionEffect(text);
    if (effect !== 'inside') this.inTransaction = effect === 'begin';
  }

  /** The text's statement; null: it goes unnamed for good; undefined: not named (yet). */
  known(text: string): S | null | undefined {
    return this.named.get(text);
  }

  /** Counts one use of a text not named yet: the fresh name it is to go under from this use on, or undefined (unnamed this time). */
  nameNow(text: string): string | undefined {
    if (text.length > PREPARED_MAX_TEXT || this.made >= this.options.max) return undefined;
    const uses = (this.uses.get(text) ?? 0) + 1;
    this.uses.set(text, uses);
    if (uses < PREPARE_AFTER_USES) return undefined;
    return `covel_${++this.made}`;
  }

  /** The text goes under `statement` from now on. */
  remember(text: string, statement: S): void {
    this.named.set(text, statement);
    if (!this.options.sharedUses) this.uses.delete(text);
  }

  /**
   * A run of the text under `statement` failed with `error`: true when it is to be sent once more
   * unnamed (0A000 outside a transaction); the name is spoiled for good on 0A000 either way.
   */
  sendUnnamedAfter(error: unknown, text: string, statement: S): boolean {
    if ((error as { code?: unknown } | null)?.code !== '0A000' || this.named.get(text) !== statement) return false;
    this.named.set(text, null);
    return !this.inTransaction;
  }
}
