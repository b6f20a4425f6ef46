import type { ClientBase } from 'pg';
import { BoundedMemo } from '../memo';
import { transactionEffect } from './pg-counts';

/**
 * Named prepared statements for the texts a process sends over and over (issue 33): PostgreSQL
 * parses, analyses and plans an unnamed statement on every send, and for the append and the claim
 * (CTEs of a few KB) that was most of the server's CPU per statement. A connection that has sent
 * a text under a name sends only Bind/Execute for it from then on; after five runs the server may
 * also keep one generic plan (`plan_cache_mode` auto) instead of planning each run.
 *
 * Bounded on both sides: a text is named only once this process has sent it `PREPARE_AFTER_SENDS`
 * times (a one-off, like a migration's, never is), only texts of at most `PREPARED_MAX_TEXT`
 * characters with parameters (a text without any goes by the simple protocol, as before), and a
 * connection names at most `PREPARED_PER_CONNECTION` texts (each lives in its backend until the
 * connection closes); past that a text goes unnamed. PGlite and the LISTEN connections are not
 * wrapped: only the pool's clients (`openDatabase`).
 *
 * After DDL that changes a named `select *`'s columns, PostgreSQL refuses to run it ("cached plan
 * must not change result type", 0A000): the connection drops that name (its text goes unnamed
 * there from then on) and, outside a transaction, sends the statement once more unnamed; inside
 * one the error stands (the transaction is aborted already) and the caller's retry runs it afresh.
 */
export const PREPARE_AFTER_SENDS = 2;
export const PREPARED_MAX_TEXT = 16_384;
export const PREPARED_PER_CONNECTION = 100;
/** Texts whose sends the process counts (the oldest counted is forgotten first). */
const SENDS_KEPT = 512;

/** Sends of each text by this process (every wrapped connection together). */
const sends = new BoundedMemo<string, number>({ maxEntries: SENDS_KEPT });

/** What one connection has prepared. */
interface ConnectionStatements {
  /** Text → its statement name; '' for a text whose name was spoiled (sent unnamed from then on). */
  named: Map<string, string>;
  /** Names made so far (the next one is `covel_<made + 1>`; a spoiled name is never used again). */
  made: number;
  /** Between a BEGIN and its COMMIT or ROLLBACK (a statement that fails there cannot be sent again). */
  inTransaction: boolean;
}

const PREPARED = Symbol('covel.pgPrepared');

/**
 * Wraps `client.query` (once per client) so that a hot statement text (see above) is sent as a
 * named prepared statement; every other call goes through as it was. Only the `(text, values)`
 * promise form is named (what kysely's PostgresDialect sends).
 */
export function prepareHotStatements(client: ClientBase, limits = { perConnection: PREPARED_PER_CONNECTION }): void {
  const target = client as ClientBase & { [PREPARED]?: ConnectionStatements };
  if (target[PREPARED]) return;
  const state: ConnectionStatements = { named: new Map(), made: 0, inTransaction: false };
  target[PREPARED] = state;
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (...args: unknown[]) => {
    const [text, values] = args;
    if (typeof text !== 'string' || !Array.isArray(values) || args.length !== 2) return query(...args);
    if (!values.length) {
      // BEGIN, COMMIT and the like: what this connection's transaction is (for the retry below)
      const effect = transactionEffect(text);
      if (effect !== 'inside') state.inTransaction = effect === 'begin';
      return query(text, values);
    }
    const name = nameFor(state, text, limits.perConnection);
    if (name === undefined) return query(text, values);
    return (query({ name, text, values }) as Promise<unknown>).catch((error: unknown) => {
      if ((error as { code?: unknown } | null)?.code !== '0A000' || state.named.get(text) !== name) throw error;
      // the named statement is spoiled for good on this connection (its result type changed)
      state.named.set(text, '');
      if (state.inTransaction) throw error;
      return query(text, values);
    });
  };
}

/** The statement name `text` goes under on this connection, or undefined: unnamed. */
function nameFor(state: ConnectionStatements, text: string, perConnection: number): string | undefined {
  const known = state.named.get(text);
  if (known !== undefined) return known || undefined;
  if (text.length > PREPARED_MAX_TEXT || state.named.size >= perConnection) return undefined;
  const sent = (sends.get(text) ?? 0) + 1;
  sends.set(text, sent);
  if (sent < PREPARE_AFTER_SENDS) return undefined;
  const name = `covel_${++state.made}`;
  state.named.set(text, name);
  return name;
}
