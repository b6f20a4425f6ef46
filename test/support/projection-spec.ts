import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import {
  type Database,
  EventStore,
  eventsFor,
  type InlineProjection,
  LOG_START,
  type LogCursor,
  migrateToLatest,
  type NewEvent,
  openDatabase,
  type OpenDatabase,
  type Projection,
  ReadModels,
  type StoredEvent,
} from '../../libs/events';

/**
 * Given/when/then specs for one projection over PGlite: given events (appended through the
 * store), when more events, then exact rows of the projection's tables for the scenario's streams.
 *
 * An inline projection is the store's `inline`: its rows are written by the appends themselves.
 * An async projection is applied as its runner does: the new events read once from the log in its
 * read order (`readAfter`), the ones of its types handed to `applyBatch` in one transaction.
 *
 * One database per spec file (opening one is slow); each scenario uses fresh ids (`uniqueIds`) and
 * its rows are selected by its streams, so scenarios don't see each other's rows.
 */

/** An append: events of one stream, at the stream's current version. */
export interface Append {
  tenant: string;
  stream: string;
  events: NewEvent[];
}

/** The tables a projection spec reads, with the order their rows are compared in. */
const ROW_ORDER = {
  executions: 'session_id, submitted_version, execution_id',
  turn_messages: 'session_id, ord',
  history_watermarks: 'session_id',
  summaries: 'session_id, seq',
  trace_events: 'global_position',
  prefix_reports: 'session_id, position',
  plugin_data: 'session_id, plugin_id, namespace, created_position',
  plugin_data_namespaces: 'session_id, plugin_id, namespace',
  worlds: 'world_id',
  world_generations: 'job_id',
} as const;

export type SpecTable = keyof typeof ROW_ORDER;
export type Row = Record<string, unknown>;
export type Rows = Partial<Record<SpecTable, Row[]>>;

/** The events a scenario appended (given, then when), to name their times and positions in rows. */
export interface AppendedLog {
  events: StoredEvent[];
  /** The time of the nth event appended (0-based), as a timestamp column holds it. */
  at(n: number): Date;
  /** The global position of the nth event appended (0-based), as a bigint column reads on PGlite (a number). */
  position(n: number): number;
}

export interface Scenario {
  given?: Append[];
  when: Append[];
  /** The rows of the scenario's streams after `when`, table by table; each table listed is compared whole. */
  then: Rows | ((log: AppendedLog) => Rows);
}

export interface ProjectionSpec {
  readonly db: Kysely<Database>;
  readonly store: EventStore;
  readonly readModels: ReadModels;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Appends (an async projection is brought up to date after each call); returns the events appended. */
  append(...appends: Append[]): Promise<StoredEvent[]>;
  /** Rows of these streams in the projection's tables (or `tables`), in each table's order. */
  rows(streams: readonly string[], tables?: readonly SpecTable[]): Promise<Record<SpecTable, Row[]>>;
  /** Runs the scenario and compares `then` with the rows; returns the log and the rows for more checks. */
  check(scenario: Scenario): Promise<{ log: AppendedLog; rows: Record<SpecTable, Row[]> }>;
  /** Hands these events to the projection again (as a runner that re-reads them would). */
  reapply(events: readonly StoredEvent[]): Promise<void>;
}

export function projectionSpec(options: { inline: InlineProjection; async?: never } | { async: Projection; inline?: never }): ProjectionSpec {
  const projection: Projection = options.inline ?? options.async;
  let open: OpenDatabase | null = null;
  let store: EventStore | null = null;
  let cursor: LogCursor = LOG_START;
  const tables = projection.tables.filter((t): t is SpecTable => t in ROW_ORDER);

  const db = () => {
    if (!open) throw new Error('projectionSpec: call start() first (beforeAll)');
    return open.db;
  };

  /** The async projection's runner, reduced to its contract: read the new events once, apply a batch. */
  const catchUp = async () => {
    if (!options.async) return;
    for (;;) {
      const entries = await store!.readAfter(cursor, { limit: 500 });
      if (entries.length === 0) return;
      // decoded only when the projection reads the type, as a runner does
      const events = entries.filter((e) => (projection.handles as readonly string[]).includes(e.type)).map((e) => e.decode());
      await db()
        .transaction()
        .execute((trx) => projection.applyBatch(trx, events));
      cursor = entries[entries.length - 1].cursor;
    }
  };

  const spec: ProjectionSpec = {
    get db() {
      return db();
    },
    get store() {
      if (!store) throw new Error('projectionSpec: call start() first (beforeAll)');
      return store;
    },
    get readModels() {
      return new ReadModels(db());
    },
    async start() {
      open = await openDatabase({ kind: 'pglite' });
      await migrateToLatest(open.db);
      store = new EventStore(open.db, options.inline ? { inline: [options.inline] } : {});
    },
    async stop() {
      await open?.close();
      open = null;
    },
    async append(...appends) {
      const appended: StoredEvent[] = [];
      for (const a of appends) {
        const version = await store!.streamVersion(a.stream);
        await store!.append({ tenantId: a.tenant, streamId: a.stream, expectedVersion: version, events: a.events });
        appended.push(...(await store!.readStream(a.stream, version)));
      }
      await catchUp();
      return appended;
    },
    async rows(streams, only = tables) {
      const result = {} as Record<SpecTable, Row[]>;
      for (const table of only) {
        const { rows } =
          await sql<Row>`select * from ${sql.table(table)} where ${sql.ref(projection.streamKey ?? 'session_id')} in (${sql.join(streams)}) order by ${sql.raw(ROW_ORDER[table])}`.execute(
            db(),
          );
        result[table] = rows;
      }
      return result;
    },
    async check(scenario) {
      const events = [...(await spec.append(...(scenario.given ?? []))), ...(await spec.append(...scenario.when))];
      const log: AppendedLog = {
        events,
        at: (n) => new Date(events[n].recordedAt),
        position: (n) => events[n].globalPosition,
      };
      const streams = [...new Set([...(scenario.given ?? []), ...scenario.when].map((a) => a.stream))];
      const expected = typeof scenario.then === 'function' ? scenario.then(log) : scenario.then;
      const rows = await spec.rows(streams, Object.keys(expected) as SpecTable[]);
      expect(rows).toEqual(expected);
      return { log, rows };
    },
    async reapply(events) {
      await db()
        .transaction()
        .execute((trx) => projection.applyBatch(trx, eventsFor(projection, events)));
    },
  };
  return spec;
}

/** Fresh ids for one scenario: `id('s1')` is the same string each time it is asked, unlike any other scenario's. */
export function uniqueIds(): (name: string) => string {
  const tag = randomUUID().slice(0, 8);
  return (name) => `${name}-${tag}`;
}
