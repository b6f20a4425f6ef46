import { Client } from 'pg';
import { parseCounts, type ProcessCounts } from './counts';

/** One process's round-trip counters, read from its /metrics (`COVEL_METRICS_PORT`). */
export async function scrapeCounts(metricsUrl: string): Promise<ProcessCounts> {
  const response = await fetch(metricsUrl);
  if (!response.ok) throw new Error(`${metricsUrl}: ${response.status} ${await response.text()}`);
  return parseCounts(await response.text());
}

/** The API's and each worker's counters, read at once. */
export async function scrapeAll(urls: { api: string; workers: readonly string[] }): Promise<{ api: ProcessCounts; workers: ProcessCounts[] }> {
  const [api, ...workers] = await Promise.all([urls.api, ...urls.workers].map(scrapeCounts));
  return { api, workers };
}

/** The log's last global position now (0 when empty): `logBytesSince` counts what comes after it. */
export async function logPosition(databaseUrl: string): Promise<string> {
  return withClient(databaseUrl, async (db) => (await db.query<{ p: string }>('select coalesce(max(global_position), 0)::text as p from events')).rows[0].p);
}

/**
 * Bytes of the events appended after `position`: their data and metadata as JSON text
 * (`octet_length(x::text)`) and as stored (`pg_column_size`, after TOAST compression).
 */
export async function logBytesSince(databaseUrl: string, position: string): Promise<{ json: number; stored: number; events: number }> {
  return withClient(databaseUrl, async (db) => {
    const { rows } = await db.query<{ json: string; stored: string; events: string }>(
      `select coalesce(sum(octet_length(data::text) + octet_length(metadata::text)), 0)::text as json,
              coalesce(sum(pg_column_size(data) + pg_column_size(metadata)), 0)::text as stored,
              count(*)::text as events
         from events where global_position > $1`,
      [position],
    );
    return { json: Number(rows[0].json), stored: Number(rows[0].stored), events: Number(rows[0].events) };
  });
}

async function withClient<T>(url: string, use: (db: Client) => Promise<T>): Promise<T> {
  const db = new Client({ connectionString: url });
  await db.connect();
  try {
    return await use(db);
  } finally {
    await db.end();
  }
}
