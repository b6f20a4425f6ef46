import { type PlayClient } from '../apps/play/play-client';
import { auditTurn, DEFAULT_HISTORY_READ_LIMIT } from '../libs/engine';
import { prefixReport, type PrefixRow } from '../libs/reports';
import { startEmbedded } from '../test/support/embedded';

const MOVES = [
  'Look around the square',
  'Walk down to the river',
  'Ask Mira about the ferry',
  'Watch the vents for a while',
  'Find the Wardens and their ledger',
  'Leave a warm stone on the path',
  'Listen for the bell',
  'Climb to the upper terrace',
];

export interface EmberbackResult {
  turns: number;
  rows: PrefixRow[];
  narratorMinSharedPercent: number;
  cachedShare: number;
  auditIdentical: boolean;
}

/** A 50-turn Emberback session on the emulator: prefix report, emulated cache-read share, audit. */
export async function runEmberback(turns: number, log: (line: string) => void): Promise<EmberbackResult> {
  const covel = await startEmbedded();
  try {
    const client: PlayClient = await covel.newTenant('bench');
    const { id } = await client.createSession({ worldId: 'emberback' });
    const turnIds: string[] = [];
    for (let t = 0; t < turns; t++) {
      const { executionId, turnId } = await client.submit(id, `${MOVES[t % MOVES.length]} (${t})`);
      await client.waitFor(executionId, 30_000);
      turnIds.push(turnId);
      if ((t + 1) % 10 === 0) log(`  played ${t + 1}/${turns} turns`);
    }
    // trace_events is an async projection: wait until it has the session's last event
    await covel.engine.projector.waitFor({ projection: 'trace_events', streamId: id, timeoutMs: 10_000 });
    const calls = await covel.engine.readModels.recordedCalls(id);
    const rows = prefixReport(calls);
    const narrator = rows.filter((r) => r.runtime === 'narrator/narrator' && r.sharedPercent !== null);
    const events = await covel.engine.store.readStream(id);
    let input = 0;
    let cached = 0;
    for (const e of events) {
      if (e.type === 'llm.responded@1') {
        input += e.data.usage.inputTokens;
        cached += e.data.usage.cachedInputTokens;
      }
    }
    let auditIdentical = true;
    for (const turnId of turnIds) {
      const audit = await auditTurn({ ...covel.engine, historyReadLimit: DEFAULT_HISTORY_READ_LIMIT }, id, turnId);
      auditIdentical &&= audit.identical && audit.calls.length > 0;
    }
    return {
      turns,
      rows,
      narratorMinSharedPercent: Math.min(...narrator.map((r) => r.sharedPercent!)),
      cachedShare: input === 0 ? 0 : cached / input,
      auditIdentical,
    };
  } finally {
    await covel.stop();
  }
}
