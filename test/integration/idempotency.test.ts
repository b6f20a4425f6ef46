import { type Kysely, sql } from 'kysely';
import { type Database, EventStore, IdempotencyKeyTakenError, migrateToLatest, openDatabase } from '../../libs/events';
import { createTestDatabase, type ManagedProcess, startApp, startStack } from '../support/stack';

interface Submission {
  key: string;
  sessionId: string;
  text: string;
}

type Answer = { executionId: string; turnId: string };

/**
 * The API is SIGKILLed while 20 inputs are being posted with idempotency keys; a client that
 * retries every request with its key after the restart gets one turn per request, never two.
 */
describe('idempotency keys survive an API crash (PostgreSQL + BullMQ)', () => {
  it('20 concurrent keyed inputs (each sent twice), API killed mid-way, every request retried: exactly 20 turns, answers unchanged', async () => {
    const stack = await startStack({ workers: 2 });
    let restarted: ManagedProcess | null = null;
    const open = await openDatabase({ kind: 'postgres', url: stack.databaseUrl });
    try {
      const { client, baseUrl, apiKey } = stack;
      const sessions = await Promise.all(Array.from({ length: 4 }, () => client.createSession()));
      const submissions: Submission[] = Array.from({ length: 20 }, (_, i) => ({
        key: `crash-${i}`,
        sessionId: sessions[i % sessions.length].id,
        text: `move ${i}`,
      }));
      const post = async (s: Submission): Promise<Answer | null> => {
        try {
          const res = await fetch(`${baseUrl}/v1/sessions/${s.sessionId}/inputs`, {
            method: 'POST',
            headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': s.key },
            body: JSON.stringify({ text: s.text }),
          });
          if (res.status !== 202) return null;
          return (await res.json()) as Answer;
        } catch {
          return null; // connection refused or reset: the API is down
        }
      };

      // all 20 at once, each sent twice (a client that retried at once); the API is killed as soon
      // as the first request is answered
      const beforeKill = new Map<string, Answer>();
      let killed: Promise<void> | null = null;
      await Promise.all(
        [...submissions, ...submissions].map(async (s) => {
          const answer = await post(s);
          if (answer) {
            // two answers to one key before the kill are one answer
            if (beforeKill.has(s.key)) expect(answer).toEqual(beforeKill.get(s.key));
            beforeKill.set(s.key, answer);
          }
          killed ??= stack.api.stop('SIGKILL');
        }),
      );
      await killed;
      // (an answer that arrived while the kill was being delivered is one the client saw too)
      const acknowledgedBeforeKill = beforeKill.size;
      const appendedBeforeRestart = await countInputs(open.db);

      restarted = await startApp('api (restarted)', 'apps/api/main.ts', stack.env, /listening on/);
      const afterRestart = new Map<string, Answer>();
      await Promise.all(
        submissions.map(async (s) => {
          for (let tries = 0; tries < 200; tries++) {
            const answer = await post(s);
            if (answer) {
              afterRestart.set(s.key, answer);
              return;
            }
            await new Promise((r) => setTimeout(r, 100));
          }
          throw new Error(`${s.key}: no answer after the restart`);
        }),
      );

      // each answer seen before the kill is the answer of the retry
      for (const [key, answer] of beforeKill) expect(afterRestart.get(key)).toEqual(answer);
      const executionIds = new Set([...afterRestart.values()].map((a) => a.executionId));
      expect(executionIds.size).toBe(20);
      for (const executionId of executionIds) await client.waitFor(executionId, 120_000);

      // exactly 20 inputs and 20 turns in the log, one per key, no duplicates
      const store = new EventStore(open.db);
      const events = (await Promise.all(sessions.map((s) => store.readStream(s.id)))).flat();
      const inputs = events.filter((e) => e.type === 'player-input.submitted@1');
      const committed = events.filter((e) => e.type === 'turn.committed@1');
      expect(inputs).toHaveLength(20);
      expect(new Set(inputs.map((e) => e.metadata.idempotencyKey))).toEqual(new Set(submissions.map((s) => s.key)));
      expect(new Set(inputs.map((e) => (e.type === 'player-input.submitted@1' ? e.data.executionId : null)))).toEqual(executionIds);
      expect(committed).toHaveLength(20);
      expect(new Set(committed.map((e) => (e.type === 'turn.committed@1' ? e.data.executionId : null)))).toEqual(executionIds);
      // each input went to the session its request named
      for (const s of submissions) {
        const input = inputs.find((e) => e.metadata.idempotencyKey === s.key)!;
        expect(input.streamId).toBe(s.sessionId);
        expect(input.type === 'player-input.submitted@1' && input.data.text).toBe(s.text);
      }
      for (const s of sessions) expect(await client.messages(s.id)).toHaveLength(10);
      // figures for the report (not asserted: they depend on timing)
      console.log(`idempotency crash test: ${acknowledgedBeforeKill} acknowledged before the kill, ${appendedBeforeRestart} appended before the restart`);
    } finally {
      await open.close();
      await restarted?.stop();
      await stack.stop();
    }
  }, 240_000);
});

async function countInputs(db: Kysely<Database>): Promise<number> {
  const { rows } = await sql<{ n: string }>`select count(*) as n from events where type = 'player-input.submitted@1'`.execute(db);
  return Number(rows[0].n);
}

describe('idempotency keys in the event store on PostgreSQL', () => {
  it('20 concurrent appends with one key on a pool: one wins, the rest get IdempotencyKeyTakenError; another tenant is independent', async () => {
    const database = await createTestDatabase();
    const open = await openDatabase({ kind: 'postgres', url: database.url, poolSize: 20 });
    try {
      await migrateToLatest(open.db);
      const store = new EventStore(open.db);
      const appendNew = (tenantId: string, i: number) =>
        store.append({
          tenantId,
          streamId: `${tenantId}-${i}`,
          expectedVersion: 0,
          events: [{ type: 'session.created@1', data: { sessionId: `${tenantId}-${i}`, worldId: null, locale: 'en' } }],
          idempotency: { key: 'one-key', requestHash: 'h' },
        });
      const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => appendNew('t1', i)));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(IdempotencyKeyTakenError);
      const { rows } = await sql<{ n: string }>`select count(*) as n from events where tenant_id = 't1'`.execute(open.db);
      expect(Number(rows[0].n)).toBe(1);
      const winner = await store.findByIdempotencyKey('t1', 'one-key');
      expect(winner?.event.type).toBe('session.created@1');
      await appendNew('t2', 0);
      expect((await store.findByIdempotencyKey('t2', 'one-key'))?.event.streamId).toBe('t2-0');
    } finally {
      await open.close();
      await database.drop();
    }
  });
});
