import { runMain } from '../apps/process-lifecycle';
import { auditTurn, createEngine, loadConfig } from '../libs/engine';

/** `npm run audit -- <session> <turn>`: re-derives every request of the turn from the events alone. */
async function main() {
  const [sessionId, turnId] = process.argv.slice(2);
  if (!sessionId || !turnId) throw new Error('usage: npm run audit -- <session> <turn> (database from DATABASE_URL or COVEL_DATA_DIR)');
  const engine = await createEngine(loadConfig(), 'api', { log: () => undefined, warn: () => undefined, error: (m) => console.error(m) });
  try {
    const audit = await auditTurn({ ...engine, historyReadLimit: engine.config.historyMessageLimit }, sessionId, turnId);
    for (const call of audit.calls) {
      console.log(
        `${call.pluginId}/${call.runtimeId} call ${call.callId}: ${call.identical ? 'byte-identical' : `DIFFERS at byte ${call.firstMismatchAt}`} (${call.recordedBytes} bytes)`,
      );
      for (const s of call.sources) console.log(`  ${s.section}: ${s.source}${s.items?.length ? `\n    ${s.items.join('\n    ')}` : ''}`);
    }
    console.log(audit.identical ? `turn ${turnId}: every request is byte-identical to what was sent` : `turn ${turnId}: some requests differ`);
    if (!audit.identical) process.exitCode = 2;
  } finally {
    await engine.close();
  }
}

runMain(main);
