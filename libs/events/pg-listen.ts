import type { Client, ClientConfig } from 'pg';

/** A LISTEN subscription; `close` ends it (and the connection, once nothing else listens on it). */
export interface Listening {
  close(): Promise<void>;
}

export interface ListenOptions {
  /** Called once if the subscription ends without `close` (PostgreSQL: its connection was lost). */
  onLost?: (error: Error) => void;
}

interface Subscription {
  channel: string;
  onNotify: (payload: string) => void;
  onLost: ((error: Error) => void) | undefined;
  /** Listening (its LISTEN answered on a connection not lost since): only such a one hears `onLost`. */
  active: boolean;
}

/** One connection and the subscriptions on it. */
interface Connection {
  client: Client;
  subscriptions: Set<Subscription>;
  /** Lost or ended: never used again. */
  over: boolean;
}

/**
 * Every LISTEN of one database handle on one connection (issue 33: PostgreSQL's CPU per turn). A
 * commit that notifies wakes every backend that LISTENs in the database, whatever the channel
 * (each reads the notification queue, the committer signals each): one listening connection per
 * process instead of one per channel (a worker listened for appends and for ended executions on
 * two) halves what a worker's listening costs the server on every notifying commit.
 *
 * The connection is opened by the first `listen` and ended when the last subscription closes; each
 * `listen` sends its own LISTEN (a channel listened to already is listened to once: the server folds
 * them). A lost connection ends every subscription on it (each hears `onLost` once); the next
 * `listen` opens a new one. A `listen` whose connection fails or is lost before its LISTEN was
 * answered rejects (it hears no `onLost`).
 */
export class SharedListen {
  private current: Connection | null = null;
  private connecting: Promise<Connection> | null = null;

  constructor(private readonly config: ClientConfig) {}

  async listen(channel: string, onNotify: (payload: string) => void, options: ListenOptions = {}): Promise<Listening> {
    const subscription: Subscription = { channel, onNotify, onLost: options.onLost, active: false };
    let connection = this.live();
    // a connection ended between the connect and this line (its last subscription closed) is replaced once
    for (let tries = 0; !connection; tries++) {
      const opened = await this.connect();
      if (!opened.over) connection = opened;
      else if (tries > 0) throw new Error(`the LISTEN connection for ${channel} ended`);
    }
    const on = connection;
    on.subscriptions.add(subscription);
    try {
      await on.client.query(`listen ${on.client.escapeIdentifier(channel)}`);
    } catch (error) {
      on.subscriptions.delete(subscription);
      // an unanswered LISTEN (query_timeout) or a broken connection: never used again, so a wedged
      // connection cannot fail every later listen; the others on it hear onLost and listen anew
      if (!isServerRefusal(error)) this.lose(on, error instanceof Error ? error : new Error(String(error)));
      else await this.endIfUnused(on);
      throw error;
    }
    // lost while the LISTEN was on its way back: the caller hears it as a rejection
    if (on.over) throw new Error(`the LISTEN connection for ${channel} ended`);
    subscription.active = true;
    return {
      close: async () => {
        subscription.active = false;
        if (!on.subscriptions.delete(subscription)) return;
        // no notification of a closed channel keeps coming while the connection serves others
        if (!on.over && on.subscriptions.size > 0 && ![...on.subscriptions].some((s) => s.channel === channel)) {
          await on.client.query(`unlisten ${on.client.escapeIdentifier(channel)}`).catch((error: unknown) => {
            if (!isServerRefusal(error)) this.lose(on, error instanceof Error ? error : new Error(String(error)));
          });
        }
        await this.endIfUnused(on);
      },
    };
  }

  private live(): Connection | null {
    return this.current && !this.current.over ? this.current : null;
  }

  /** The connection being opened, or a new one. */
  private connect(): Promise<Connection> {
    this.connecting ??= this.open().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async open(): Promise<Connection> {
    const { Client } = await import('pg');
    const client = new Client(this.config);
    const connection: Connection = { client, subscriptions: new Set(), over: false };
    client.on('error', (error) => this.lose(connection, error));
    client.on('end', () => this.lose(connection, new Error('the LISTEN connection ended')));
    client.on('notification', (message) => {
      for (const s of [...connection.subscriptions]) if (s.channel === message.channel) deliver(s, message.payload ?? '');
    });
    try {
      await client.connect();
    } catch (error) {
      connection.over = true;
      await client.end().catch(() => undefined);
      throw error;
    }
    if (!connection.over) this.current = connection;
    return connection;
  }

  /** The connection was lost: each subscription that listens on it hears it once. */
  private lose(connection: Connection, error: Error): void {
    if (connection.over) return; // ended on purpose, or heard already
    connection.over = true;
    if (this.current === connection) this.current = null;
    const lost = [...connection.subscriptions].filter((s) => s.active);
    connection.subscriptions.clear();
    for (const s of lost) {
      s.active = false;
      s.onLost?.(error);
    }
    void connection.client.end().catch(() => undefined);
  }

  private async endIfUnused(connection: Connection): Promise<void> {
    if (connection.subscriptions.size > 0 || connection.over) return;
    connection.over = true;
    if (this.current === connection) this.current = null;
    await connection.client.end().catch(() => undefined);
  }
}

/** An error the server answered (SQLSTATE): the connection still works. */
function isServerRefusal(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as { code?: unknown }).code === 'string' &&
    /^[0-9A-Z]{5}$/.test((error as { code: string }).code)
  );
}

/** One subscriber that throws neither stops the others' delivery nor throws inside pg's message handler. */
function deliver(subscription: Subscription, payload: string): void {
  try {
    subscription.onNotify(payload);
  } catch (error) {
    process.emitWarning(`a LISTEN subscriber of ${subscription.channel} threw: ${error instanceof Error ? error.message : String(error)}`);
  }
}
