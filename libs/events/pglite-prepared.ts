import type { PGlite, Results } from '@electric-sql/pglite';
import { BoundedMemo } from '../memo';

/**
 * Named prepared statements on PGlite (the embedded default), as `pg-prepared.ts` does on the
 * pool's connections: PGlite's `query` sends every statement unnamed (Parse, Describe, Bind,
 * Describe, Execute, Sync), so PostgreSQL parses, analyses and plans it on every run; the append
 * statement with its inline projections (a few KB of CTEs) cost about 4 ms of CPU a run that way,
 * most of an embedded turn's database time. A text this database has run `PREPARE_AFTER_RUNS`
 * times is parsed once under a name (its parameter types and row description kept), then run
 * with Bind, Execute and Sync alone; PostgreSQL keeps its plan (generic after five runs).
 *
 * Bounded: only texts with parameters of at most `PREPARED_MAX_TEXT` characters, at most
 * `PGLITE_PREPARED_MAX` names (then texts go unnamed as before). A statement PostgreSQL refuses to
 * run again under its name ("cached plan must not change result type" after DDL, 0A000) loses the
 * name: outside a transaction it is sent once more unnamed, inside one the error stands (the
 * transaction is aborted already) and the caller's retry sends it unnamed.
 */
export const PREPARE_AFTER_RUNS = 2;
export const PREPARED_MAX_TEXT = 16_384;
export const PGLITE_PREPARED_MAX = 200;
/** Texts whose runs are counted (the oldest counted is forgotten first). */
const RUNS_KEPT = 512;

type PGliteModule = typeof import('@electric-sql/pglite');
type BackendMessage = Awaited<ReturnType<PGlite['execProtocolStream']>>[number];

interface Named {
  name: string;
  /** The parameters' type oids (Describe of the statement), which pick each value's serializer. */
  paramTypes: readonly number[];
  /** The statement's row description, or null when it returns no rows (NoData). */
  rowDescription: BackendMessage | null;
}

export class PGlitePreparedStatements {
  private readonly runs = new BoundedMemo<string, number>({ maxEntries: RUNS_KEPT });
  /** Text → its statement; null: the name was spoiled (the text goes unnamed from then on). */
  private readonly named = new Map<string, Named | null>();
  private made = 0;
  private inTransaction = false;
  private module: Promise<PGliteModule> | null = null;

  constructor(
    private readonly pglite: PGlite,
    private readonly limits = { max: PGLITE_PREPARED_MAX },
  ) {}

  /** How many texts run under a name now (tests and metrics). */
  get size(): number {
    let n = 0;
    for (const statement of this.named.values()) if (statement) n++;
    return n;
  }

  async query<R>(text: string, values: readonly unknown[]): Promise<Results<R>> {
    if (values.length === 0) {
      this.noteTransaction(text);
      return this.pglite.query<R>(text);
    }
    const statement = await this.statementFor(text);
    if (!statement) return this.pglite.query<R>(text, [...values]);
    try {
      return await this.run<R>(statement, values);
    } catch (error) {
      if ((error as { code?: unknown }).code !== '0A000') throw error;
      this.named.set(text, null);
      if (this.inTransaction) throw error;
      return this.pglite.query<R>(text, [...values]);
    }
  }

  private noteTransaction(text: string): void {
    const verb = text.trimStart().slice(0, 8).toLowerCase();
    if (verb.startsWith('begin') || verb.startsWith('start')) this.inTransaction = true;
    else if (verb.startsWith('commit') || verb.startsWith('rollback') || verb.startsWith('end') || verb.startsWith('abort')) this.inTransaction = false;
  }

  /** The text's named statement, made on its `PREPARE_AFTER_RUNS`th run; null: it goes unnamed this time. */
  private async statementFor(text: string): Promise<Named | null> {
    const known = this.named.get(text);
    if (known !== undefined) return known;
    if (text.length > PREPARED_MAX_TEXT || this.made >= this.limits.max) return null;
    const runs = (this.runs.get(text) ?? 0) + 1;
    this.runs.set(text, runs);
    if (runs < PREPARE_AFTER_RUNS) return null;
    const { protocol } = await this.pgliteModule();
    const name = `covel_${++this.made}`;
    try {
      const described = await this.exchange([protocol.serialize.parse({ name, text }), protocol.serialize.describe({ type: 'S', name })]);
      const parameters = described.find((m) => m.name === 'parameterDescription') as { dataTypeIDs?: number[] } | undefined;
      const statement: Named = {
        name,
        paramTypes: parameters?.dataTypeIDs ?? [],
        rowDescription: described.find((m) => m.name === 'rowDescription') ?? null,
      };
      this.named.set(text, statement);
      this.runs.delete(text);
      return statement;
    } catch {
      // a text PostgreSQL cannot parse here (or not now: an aborted transaction) goes unnamed, which reports its error as PGlite does
      return null;
    }
  }

  private async run<R>(statement: Named, values: readonly unknown[]): Promise<Results<R>> {
    const { protocol, parse } = await this.pgliteModule();
    const serializers = this.pglite.serializers;
    const bound = values.map((value, i) => {
      if (value === null || value === undefined) return null;
      const serialize = serializers[statement.paramTypes[i]!];
      return serialize ? serialize(value) : String(value);
    });
    const replies = await this.exchange([protocol.serialize.bind({ statement: statement.name, values: bound }), protocol.serialize.execute({})]);
    const messages = statement.rowDescription ? [statement.rowDescription, ...replies] : replies;
    return parse.parseResults(messages, this.pglite.parsers)[0] as Results<R>;
  }

  /** Sends the messages then Sync, alone on the database (as PGlite's own `query`), and gives back every reply but Sync's. */
  private async exchange(messages: readonly Uint8Array[]): Promise<BackendMessage[]> {
    const { protocol } = await this.pgliteModule();
    return this.pglite.runExclusive(async () => {
      const replies: BackendMessage[] = [];
      try {
        for (const message of messages) replies.push(...(await this.pglite.execProtocolStream(message, { syncToFs: false })));
      } finally {
        await this.pglite.execProtocolStream(protocol.serialize.sync(), { syncToFs: false });
      }
      return replies;
    });
  }

  private pgliteModule(): Promise<PGliteModule> {
    this.module ??= import('@electric-sql/pglite');
    return this.module;
  }
}
