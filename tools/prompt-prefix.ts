import { parseArgs } from 'node:util';
import { runMain } from '../apps/process-lifecycle';
import { createAsyncProjector } from '../libs/engine';
import { openDatabase, prepareSchema, ReadModels } from '../libs/events';
import { branchPrefixReport, formatBranchPrefixTable, formatPrefixTables, prefixReport, readBranchPoint } from '../libs/reports';
import { databaseFromArg } from './database-arg';

const USAGE = 'usage: npm run prompt:prefix -- <database> [--session <id> [--against <parent session id>]] [--show <plugin>/<runtime>] [--json]';

/**
 * `npm run prompt:prefix`: no model, no running service. Reads llm.calling from trace_events and
 * compares, per runtime, the first request of each turn with the previous turn's. With
 * `--session <branch> --against <parent>`: per runtime, the branch's first request against the
 * request the parent sent at the same point (its first request after the branch point).
 */
async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { session: { type: 'string' }, against: { type: 'string' }, show: { type: 'string' }, json: { type: 'boolean' } },
  });
  if (positionals.length !== 1) throw new Error(USAGE);
  if (values.against !== undefined && values.session === undefined) throw new Error(`--against needs --session <branch>\n${USAGE}`);
  const config = databaseFromArg(positionals[0]);
  const database = await openDatabase(config);
  try {
    // as the app role this only checks the schema is current (it cannot migrate)
    await prepareSchema(database, config);
    // trace_events is an async projection: bring what no running worker holds up to the log's head
    const projector = createAsyncProjector(database.db, {
      owner: `prompt-prefix:${process.pid}`,
      logger: { log: () => undefined, warn: (m) => console.warn(m), error: (m) => console.error(m) },
    });
    await projector.drain();
    await projector.stop();
    const reads = new ReadModels(database.db);
    if (values.against !== undefined) {
      const point = await readBranchPoint(database.db, values.session!);
      if (point === null) throw new Error(`session ${values.session} is not a branch`);
      if (point.parentSessionId !== values.against) {
        throw new Error(`session ${values.session} is a branch of ${point.parentSessionId}, not of ${values.against}`);
      }
      const [branchCalls, parentCalls] = await Promise.all([reads.recordedCalls(point.branchSessionId), reads.recordedCalls(point.parentSessionId)]);
      const rows = branchPrefixReport({ point, branchCalls, parentCalls });
      if (values.json)
        console.log(JSON.stringify({ estimate: 'tokens estimated from characters (1 per CJK character, 1 per 4 others)', point, rows }, null, 2));
      else if (rows.length === 0) console.log(`no recorded calls for branch ${point.branchSessionId} yet`);
      else console.log(formatBranchPrefixTable(point, rows));
      return;
    }
    const calls = await reads.recordedCalls(values.session);
    const rows = prefixReport(calls.map((c) => ({ ...c })));
    if (values.json) {
      console.log(JSON.stringify({ estimate: 'tokens estimated from characters (1 per CJK character, 1 per 4 others)', rows }, null, 2));
      return;
    }
    if (rows.length === 0) {
      console.log(values.session ? `no recorded calls for session ${values.session}` : 'no recorded calls');
      return;
    }
    console.log(formatPrefixTables(rows));
    if (values.show) {
      for (const r of rows.filter((x) => x.runtime === values.show && x.firstDifference)) {
        const d = r.firstDifference!;
        console.log(
          `\nturn ${r.turn} ${r.runtime}: first difference at ${d.messageIndex === null ? d.role : `message ${d.messageIndex} (${d.role})`} offset ${d.offset}${d.section ? ` [${d.section}]` : ''}`,
        );
        console.log(`  before: ${JSON.stringify(d.before)}`);
        console.log(`  after:  ${JSON.stringify(d.after)}`);
      }
    }
  } finally {
    await database.close();
  }
}

runMain(main);
