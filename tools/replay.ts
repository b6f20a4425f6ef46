import { parseArgs } from 'node:util';
import type { Kysely } from 'kysely';
import { runMain } from '../apps/process-lifecycle';
import { ASYNC_PROJECTIONS, createAsyncProjector, engineInlineProjections, loadConfig } from '../libs/engine';
import { type Database, openDatabase, prepareSchema, type QuarantinedEvent, rebuildInline, REPLAY_OWNER_PREFIX } from '../libs/events';

const INLINE_NAMES = engineInlineProjections.map((p) => p.name);
const USAGE = `usage: npm run replay -- [--projection <name> | --async] (names: ${[...INLINE_NAMES, ...ASYNC_PROJECTIONS.map((p) => p.name)].join(', ')})`;
const print = { log: (m: string) => console.log(m), warn: (m: string) => console.warn(m), error: (m: string) => console.error(m) };

/** One line per quarantined event the replayed projection still skips (the operator's view: tenant, stream, error). */
function describeQuarantined(q: QuarantinedEvent): string {
  const ack = q.acknowledgedAt ? `acknowledged ${q.acknowledgedAt} by ${q.acknowledgedBy ?? '?'}` : 'not acknowledged';
  return (
    `quarantined #${q.id}: projection ${q.projection} skips global position ${q.globalPosition} (${q.eventType}) of stream ${q.streamId} ` +
    `(tenant ${q.tenantId}), ${q.attempts} attempt(s), ${ack}: ${q.error}`
  );
}

/**
 * The views a turn reads (executions, turn_messages, summaries, plugin_data; applied inline with each append):
 * rebuilt stream by stream, each stream in its own short transaction holding that stream's lock,
 * so appends to other streams never wait. Returns the number of streams left unrebuilt.
 */
async function rebuildTurnReadViews(db: Kysely<Database>, names: readonly string[]): Promise<number> {
  if (names.length === 0) return 0;
  const projections = engineInlineProjections.filter((p) => names.includes(p.name));
  const result = await rebuildInline({
    db,
    projections,
    onProgress: (p) => console.log(`  inline (${names.join(', ')}): ${p.streams} streams, ${p.events} events so far`),
  });
  console.log(`inline views (${names.join(', ')}): rebuilt ${result.streams} streams from ${result.events} events`);
  for (const f of result.failures)
    console.error(`stream ${f.streamId} could not be rebuilt (its old rows are kept): ${f.error instanceof Error ? f.error.message : String(f.error)}`);
  return result.failures.length;
}

/**
 * `npm run replay -- [--projection <name> | --async]`: rebuilds projections from the event log (all,
 * the one named, or only the async ones) while the service runs. An async projection is rebuilt shard by shard, each batch its
 * own short transaction, under the owner `replay:<pid>` (its shards are taken from whoever works
 * them and given back at the end); other projections and turns go on meanwhile. An event an async
 * projection still cannot apply is tried COVEL_PROJECTION_QUARANTINE_AFTER times, then quarantined and
 * skipped; every quarantined event the rebuilt projections still skip is reported (one line each), as
 * is a stream an inline view cannot rebuild; the exit code is then 1.
 */
async function main() {
  const { values } = parseArgs({ options: { projection: { type: 'string' }, async: { type: 'boolean' } } });
  const known = [...INLINE_NAMES, ...ASYNC_PROJECTIONS.map((p) => p.name)];
  if (values.projection !== undefined && !known.includes(values.projection))
    throw new Error(`unknown projection ${JSON.stringify(values.projection)}; ${USAGE}`);
  const chosen = (names: readonly string[]) => names.filter((n) => values.projection === undefined || n === values.projection);
  const turnReads = values.async ? [] : chosen(INLINE_NAMES);

  const config = loadConfig();
  const database = await openDatabase(config.database);
  try {
    for (const warning of (await prepareSchema(database, config.database)).warnings) console.warn(warning);
    const started = Date.now();
    let stopped = await rebuildTurnReadViews(database.db, turnReads);

    const projector = createAsyncProjector(database.db, {
      owner: `${REPLAY_OWNER_PREFIX}${process.pid}`,
      logger: print,
      quarantineAfter: config.projector.quarantineAfter,
    });
    let read = 0;
    for (const name of chosen(ASYNC_PROJECTIONS.map((p) => p.name))) {
      const result = await projector.replay({
        projection: name,
        onProgress: (p) => {
          console.log(`  ${p.projection} shard ${p.shard}: ${p.read} events${p.done ? ', done' : ' so far'}, at global position ${p.cursor.globalPosition}`);
        },
      });
      for (const r of result.projections) {
        read += r.read;
        if (r.resolved > 0) console.log(`${r.name}: ${r.resolved} quarantined event(s) applied this time (their records are resolved)`);
        for (const q of r.quarantined) console.error(describeQuarantined(q));
        stopped += r.quarantined.length;
      }
    }
    console.log(`replayed ${read} events into the async projections in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    if (stopped > 0) console.error(`${stopped} event(s) not applied: see above (quarantined events: npm run quarantine)`);
    if (stopped > 0) process.exitCode = 1;
  } finally {
    await database.close();
  }
}

runMain(main);
