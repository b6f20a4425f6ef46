import type { Kysely } from 'kysely';
import { type LogCursor, type OrderedLogEntry, toLogEntry } from '../../event-store';
import type { Database } from '../../schema';
import { textStatement } from '../../sql-text';

/**
 * The fields of an event's data that hold JSON text (a request body, a reply), by type. In the log
 * each is a JSON string inside the jsonb, so it comes escaped in the data's JSON text and is
 * unescaped by the JSON parse of the whole data, before a projection parses it again (a request
 * body is most of a turn's bytes: ~10 KB per `llm.calling`, 10 per Emberback turn; issue 33). The
 * projector's read takes each out of the data in SQL and reads it as a text column instead.
 */
export const TEXT_FIELDS: Readonly<Record<string, string>> = { 'llm.calling@1': 'body', 'llm.responded@1': 'reply' };

/** `(case when <a field of the type is a string> then <if> else <else> end)`: only a string is taken out (anything else stays, for the schema to refuse). */
const byTextField = (then: (field: string) => string, otherwise: string) =>
  `(case ${Object.entries(TEXT_FIELDS)
    .map(([type, field]) => `when e.type = '${type}' and jsonb_typeof(e.data->'${field}') = 'string' then ${then(field)}`)
    .join(' ')} else ${otherwise} end)`;

/**
 * `EventStore.readAfterEach`'s statement (the same reads, order and rule: see it) with `$5`, the
 * types read with their data, always given; an event of those types with a JSON text field
 * (`TEXT_FIELDS`) has that field in `text_field`, not in `data`.
 */
export const READ_LANES = `select r.k::int as k, e.global_position, e.tenant_id, e.stream_id, e.stream_version, e.type,
    case when e.type = any($5::text[]) then ${byTextField((f) => `e.data - '${f}'`, 'e.data')} end as data,
    case when e.type = any($5::text[]) then ${byTextField((f) => `e.data->>'${f}'`, 'null')} end as text_field,
    case when e.type = any($5::text[]) then e.metadata end as metadata,
    e.recorded_at, e.transaction_id
  from unnest($1::int[], $2::xid8[], $3::bigint[]) with ordinality as r(log_partition, transaction_id, global_position, k)
  cross join lateral (
    select * from events
    where log_partition = r.log_partition
      and (transaction_id, global_position) > (r.transaction_id, r.global_position)
      and transaction_id < pg_snapshot_xmin(pg_current_snapshot())
    order by transaction_id, global_position
    limit $4
  ) e
  order by r.k, e.transaction_id, e.global_position`;

interface LaneRow {
  k: number;
  global_position: string;
  tenant_id: string;
  stream_id: string;
  stream_version: number;
  type: string;
  data: Record<string, unknown> | null;
  text_field: string | null;
  metadata: unknown;
  recorded_at: Date;
  transaction_id: string;
}

/** The `decode` of an entry read without its data (not of the read's types). */
const notRead = (type: string) => (): never => {
  throw new Error(`an event of type ${type} was read without its data (not among the read's types)`);
};

/**
 * What `EventStore.readAfterEach(reads, { limit, types })` reads, in one statement: each read's
 * entries, in the order of `reads`, an entry of `types` decoding to the same event; its JSON text
 * field (`TEXT_FIELDS`) travels as text, not escaped in the data's JSON (one parse of it saved,
 * the projection's own).
 */
export async function readLanes(
  db: Kysely<Database>,
  reads: readonly { partition: number; cursor: LogCursor }[],
  options: { limit: number; types: readonly string[] },
): Promise<OrderedLogEntry[][]> {
  const read: OrderedLogEntry[][] = reads.map(() => []);
  if (reads.length === 0) return read;
  const parameters = [
    reads.map((r) => r.partition),
    reads.map((r) => r.cursor.transactionId),
    reads.map((r) => String(r.cursor.globalPosition)),
    options.limit,
    options.types,
  ];
  const { rows } = await db.executeQuery(textStatement<LaneRow, Database>(db, READ_LANES, parameters));
  for (const row of rows) {
    const field = TEXT_FIELDS[row.type];
    const data = row.text_field !== null && row.data !== null && field !== undefined ? { ...row.data, [field]: row.text_field } : row.data;
    const entry = options.types.includes(row.type) ? toLogEntry({ ...row, data }) : { ...toLogEntry(row), decode: notRead(row.type) };
    read[Number(row.k) - 1].push({ ...entry, cursor: { transactionId: String(row.transaction_id), globalPosition: Number(row.global_position) } });
  }
  return read;
}
