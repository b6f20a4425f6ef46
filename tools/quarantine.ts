import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import { runMain } from '../apps/process-lifecycle';
import { loadConfig } from '../libs/engine';
import { openDatabase, prepareSchema, type QuarantinedEvent, QuarantineRecords } from '../libs/events';

const USAGE = 'usage: npm run quarantine -- [--all | --ack <id> [--by <name>]]';

/** One line per record: what the operator needs to decide (tenant, stream, error) and its state. */
function describeRecord(q: QuarantinedEvent): string {
  const state = q.resolvedAt
    ? `resolved ${q.resolvedAt} (a replay applied it)`
    : q.acknowledgedAt
      ? `acknowledged ${q.acknowledgedAt} by ${q.acknowledgedBy ?? '?'}`
      : 'OPEN (keeps /health degraded)';
  return (
    `#${q.id} ${q.projection} shard ${q.shard}: global position ${q.globalPosition} (${q.eventType}) of stream ${q.streamId} (tenant ${q.tenantId}), ` +
    `quarantined ${q.quarantinedAt} after ${q.attempts} attempt(s), ${state}: ${q.error}`
  );
}

/**
 * `npm run quarantine`: the events async projections skipped (every tenant's), unresolved ones
 * (`--all`: resolved too); `--ack <id>` acknowledges one (`/health` stops counting it). The same as
 * `GET /admin/quarantine` and `POST /admin/quarantine/:id/ack` with the admin key, for a stopped
 * embedded default (its data directory is locked while it runs) or without an admin key.
 */
async function main() {
  const { values } = parseArgs({ options: { all: { type: 'boolean' }, ack: { type: 'string' }, by: { type: 'string' } } });
  const config = loadConfig();
  const database = await openDatabase(config.database);
  try {
    for (const warning of (await prepareSchema(database, config.database)).warnings) console.warn(warning);
    const records = new QuarantineRecords(database.db);
    if (values.ack !== undefined) {
      const acked = await records.acknowledge(values.ack, values.by ?? `cli:${userInfo().username}`);
      if (!acked) throw new Error(`no quarantined event #${values.ack}; ${USAGE}`);
      console.log(describeRecord(acked));
      return;
    }
    const list = await records.list({ state: values.all ? 'all' : 'unresolved' });
    for (const q of list) console.log(describeRecord(q));
    const open = list.filter((q) => q.acknowledgedAt === null && q.resolvedAt === null).length;
    console.log(`${list.length} quarantined event(s)${values.all ? '' : ' unresolved'}, ${open} not acknowledged`);
  } finally {
    await database.close();
  }
}

runMain(main);
