import { auditTurn, DEFAULT_HISTORY_READ_LIMIT, type Engine } from '../../libs/engine';
import type { PlayClient } from '../../apps/play/play-client';

/** Submits each text as a turn of the session and waits for it to commit; resolves to the turn ids in order. */
export async function playTurns(client: PlayClient, sessionId: string, texts: readonly string[], timeoutMs = 20_000): Promise<string[]> {
  const turnIds: string[] = [];
  for (const text of texts) {
    const { executionId, turnId } = await client.submit(sessionId, text);
    const status = await client.waitFor(executionId, timeoutMs);
    if (status !== 'committed') throw new Error(`turn "${text}" ended ${status}`);
    turnIds.push(turnId);
  }
  return turnIds;
}

/** Whether the audit rebuilds every request of each turn byte for byte (no model, no plugin code). */
export async function auditedIdentical(engine: Engine, sessionId: string, turnIds: readonly string[]): Promise<boolean[]> {
  const out: boolean[] = [];
  for (const turnId of turnIds) out.push((await auditTurn({ ...engine, historyReadLimit: DEFAULT_HISTORY_READ_LIMIT }, sessionId, turnId)).identical);
  return out;
}
