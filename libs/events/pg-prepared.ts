import type { ClientBase } from 'pg';
import { BoundedMemo } from '../memo';
import { PREPARE_AFTER_USES, PREPARED_USES_KEPT, PreparedNaming } from './prepared-naming';

/**
 * Named prepared statements for the texts a process sends over and over (issue 33): PostgreSQL
 * parses, analyses and plans an unnamed statement on every send, and for the append and the claim
 * (CTEs of a few KB) that was most of the server's CPU per statement. A connection that has sent
 * a text under a name sends only Bind/Execute for it from then on; after five runs the server may
 * also keep one generic plan (`plan_cache_mode` auto) instead of planning each run.
 *
 * When a text is named, and what a spoiled name does, is `prepared-naming.ts` (shared with PGlite):
 * here the sends are counted by this process (every wrapped connection together), a connection
 * names at most `PREPARED_PER_CONNECTION` texts (each lives in its backend until the connection
 * closes). PGlite and the LISTEN connections are not wrapped: only the pool's clients (`openDatabase`).
 */
export const PREPARE_AFTER_SENDS = PREPARE_AFTER_USES;
export const PREPARED_PER_CONNECTION = 100;

/** Sends of each text by this process (every wrapped connection together). */
const sends = new BoundedMemo<string, number>({ maxEntries: PREPARED_USES_KEPT });

const PREPARED = Symbol('covel.pgPrepared');

/**
 * Wraps `client.query` (once per client) so that a hot statement text (see above) is sent as a
 * named prepared statement; every other call goes through as it was. Only the `(text, values)`
 * promise form is named (what kysely's PostgresDialect sends).
 */
export function prepareHotStatements(client: ClientBase, limits = { perConnection: PREPARED_PER_CONNECTION }): void {
  const target = client as ClientBase & { [PREPARED]?: PreparedNaming<string> };
  if (target[PREPARED]) return;
  const naming = new PreparedNaming<string>({ max: limits.perConnection, sharedUses: sends });
  target[PREPARED] = naming;
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (...args: unknown[]) => {
    const [text, values] = args;
    if (typeof text !== 'string' || !Array.isArray(values) || args.length !== 2) return query(...args);
    if (!values.length) {
      naming.noteUnparameterised(text);
      return query(text, values);
    }
    const name = nameFor(naming, text);
    if (name === null) return query(text, values);
    return (query({ name, text, values }) as Promise<unknown>).catch((error: unknown) => {
      if (!naming.sendUnnamedAfter(error, text, name)) throw error;
      return query(text, values);
    });
  };
}

/** The statement name `text` goes under on this connection, or null: unnamed. */
function nameFor(naming: PreparedNaming<string>, text: string): string | null {
  const known = naming.known(text);
  if (known !== undefined) return known;
  const name = naming.nameNow(text);
  if (name === undefined) return null;
  naming.remember(text, name);
  return name;
}
