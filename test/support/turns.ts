import { auditTurn, DEFAULT_HISTORY_READ_LIMIT, type Engine } from '../../libs/engine';
import type { StoredEvent } from '../../libs/events';
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

/** The session's events once `executions` executions have ended (committed or failed): activations run after the turn. */
export async function afterExecutionsEnded(engine: Engine, sessionId: string, executions: number, timeoutMs = 20_000): Promise<StoredEvent[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = await engine.store.readStream(sessionId);
    const ended = events.filter((e) => e.type === 'turn.committed@1' || e.type === 'execution.failed@1').length;
    if (ended >= executions) return events;
    if (Date.now() > deadline) throw new Error(`only ${ended} of ${executions} executions ended`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
