import type { PGlite, Results } from '@electric-sql/pglite';
import { PREPARE_AFTER_USES, PreparedNaming } from './prepared-naming';

/**
 * Named prepared statements on PGlite (the embedded default), as `pg-prepared.ts` does on the
 * pool's connections: PGlite's `query` sends every statement unnamed (Parse, Describe, Bind,
 * Describe, Execute, Sync), so PostgreSQL parses, analyses and plans it on every run; the append
 * statement with its inline projections (a few KB of CTEs) cost about 4 ms of CPU a run that way,
 * most of an embedded turn's database time. A text this database has run `PREPARE_AFTER_RUNS`
 * times is parsed once under a name (its parameter types and row description kept), then run
 * with Bind, Execute and Sync alone; PostgreSQL keeps its plan (generic after five runs).
 *
 * When a text is named, and what a spoiled name does, is `prepared-naming.ts` (shared with the pool's
 * connections): here the runs are counted by this database, which names at most `PGLITE_PREPARED_MAX` texts.
 */
export const PREPARE_AFTER_RUNS = PREPARE_AFTER_USES;
export const PGLITE_PREPARED_MAX = 200;

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
  private readonly naming: PreparedNaming<Named>;
  private module: Promise<PGliteModule> | null = null;

  constructor(
    private readonly pglite: PGlite,
    limits = { max: PGLITE_PREPARED_MAX },
  ) {
    this.naming = new PreparedNaming({ max: limits.max });
  }

  /** How many texts run under a name now (tests and metrics). */
  get size(): number {
    return this.naming.size;
  }

  async query<R>(text: string, values: readonly unknown[]): Promise<Results<R>> {
    if (values.length === 0) {
      this.naming.noteUnparameterised(text);
      return this.pglite.query<R>(text);
    }
    const statement = await this.statementFor(text);
    if (!statement) return this.pglite.query<R>(text, [...values]);
    try {
      return await this.run<R>(statement, values);
    } catch (error) {
      if (!this.naming.sendUnnamedAfter(error, text, statement)) throw error;
      return this.pglite.query<R>(text, [...values]);
    }
  }

  /** The text's named statement, made on its `PREPARE_AFTER_RUNS`th run; null: it goes unnamed this time. */
  private async statementFor(text: string): Promise<Named | null> {
    const known = this.naming.known(text);
    if (known !== undefined) return known;
    const name = this.naming.nameNow(text);
    if (name === undefined) return null;
    const { protocol } = await this.pgliteModule();
    try {
      const described = await this.exchange([protocol.serialize.parse({ name, text }), protocol.serialize.describe({ type: 'S', name })]);
      const parameters = described.find((m) => m.name === 'parameterDescription') as { dataTypeIDs?: number[] } | undefined;
      const statement: Named = {
        name,
        paramTypes: parameters?.dataTypeIDs ?? [],
        rowDescription: described.find((m) => m.name === 'rowDescription') ?? null,
      };
      this.naming.remember(text, statement);
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
