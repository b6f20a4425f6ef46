import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { EventStore, inlineProjections, openDatabase, type OpenDatabase } from '../../libs/events';
import { dumpProjections } from '../support/projection-dump';
import { startStack, type Stack } from '../support/stack';
import { playTurns } from '../support/turns';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');

interface Row {
  turnId: string;
  order: number;
  role: string;
  text: string;
  messageId: string;
}
interface Alternatives {
  turnId: string;
  alternatives: { id: string; turnId: string; status: string; selected: boolean; preview: string }[];
}

/** Issue 16 acceptance, part 1: regenerate a turn and pick an alternative on PostgreSQL + BullMQ. */
describe('regenerate a turn (PostgreSQL + BullMQ)', () => {
  let stack: Stack;
  let open: OpenDatabase;
  beforeAll(async () => {
    stack = await startStack({ workers: 2 });
    open = await openDatabase({ kind: 'postgres', url: stack.databaseUrl });
  }, 120_000);
  afterAll(async () => {
    await open?.close();
    await stack?.stop();
  }, 60_000);

  async function call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${stack.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${stack.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }
  const history = (sessionId: string) => stack.client.request<Row[]>('GET', `/v1/sessions/${sessionId}/messages`);

  it('retry the latest turn 3 times, select the second alternative, play 2 more turns: history, log, replay and requests agree', async () => {
    const { client } = stack;
    const { id: sessionId } = await client.createSession();
    const turnIds = await playTurns(client, sessionId, ['Light the lantern', 'Follow the river'], 60_000);
    const before = await history(sessionId);
    const sourceStory = before.filter((m) => m.turnId === turnIds[1] && m.role === 'assistant').map((m) => m.text);
    expect(sourceStory.length).toBeGreaterThan(0);

    // three regenerations of the latest turn, each of the one selected at the time
    const retries: { executionId: string; turnId: string }[] = [];
    for (let i = 0; i < 3; i++) {
      const latest = i === 0 ? turnIds[1] : retries[i - 1].turnId;
      const answer = await call('POST', `/v1/sessions/${sessionId}/turns/${latest}/retry`);
      expect(answer.status).toBe(202);
      const started = answer.body as { executionId: string; turnId: string };
      retries.push(started);
      expect(await client.waitFor(started.executionId, 60_000)).toBe('committed');
    }

    // an older turn cannot be regenerated
    const older = await call('POST', `/v1/sessions/${sessionId}/turns/${turnIds[0]}/retry`);
    expect(older.status).toBe(409);
    expect(older.body).toMatchObject({ code: 'NOT_LATEST_TURN' });
    expect(older.body.message).toContain(retries[2].turnId);

    // four alternatives: the original and three regenerations, the last one selected
    const listed = (await call('GET', `/v1/sessions/${sessionId}/turns/${turnIds[1]}/alternatives`)).body as unknown as Alternatives;
    expect(listed.turnId).toBe(turnIds[1]);
    expect(listed.alternatives.map((a) => [a.turnId, a.status, a.selected])).toEqual([
      [turnIds[1], 'committed', false],
      [retries[0].turnId, 'committed', false],
      [retries[1].turnId, 'committed', false],
      [retries[2].turnId, 'committed', true],
    ]);

    // select the second alternative (the first regeneration)
    const second = listed.alternatives[1];
    const selected = await call('POST', `/v1/sessions/${sessionId}/turns/${turnIds[1]}/select`, { alternativeId: second.id });
    expect(selected).toEqual({ status: 200, body: { alternativeId: second.id, turnId: second.turnId } });
    const afterSelect = await history(sessionId);
    expect(afterSelect.map((m) => m.turnId)).toEqual([
      ...before.filter((m) => m.turnId === turnIds[0]).map((m) => m.turnId),
      ...afterSelect.slice(2).map(() => second.turnId),
    ]);

    // two more turns
    const more = await playTurns(client, sessionId, ['Cross the bridge', 'Rest by the fire'], 60_000);
    const rows = await history(sessionId);
    const turnsShown = [...new Set(rows.map((r) => r.turnId))];
    expect(turnsShown).toEqual([turnIds[0], second.turnId, ...more]);
    expect(rows.map((r) => r.order)).toEqual(rows.map((_, i) => i + 1));
    // the next turn's request was built on the selected alternative
    const store = new EventStore(open.db, { inline: inlineProjections });
    const events = await store.readStream(sessionId);
    const selectedStory = rows.filter((r) => r.turnId === second.turnId && r.role === 'assistant').map((r) => r.text);
    const nextCalls = events.filter((e) => e.type === 'llm.calling@1' && e.data.turnId === more[0]);
    expect(nextCalls.length).toBeGreaterThan(0);
    for (const c of nextCalls)
      if (c.type === 'llm.calling@1') for (const text of selectedStory) expect(c.data.body).toContain(JSON.stringify(text).slice(1, -1));

    // the log holds all four alternatives of turn 2: four inputs, four commits; three retries superseded, one selection
    const inputsOf2 = events.filter((e) => e.type === 'player-input.submitted@1' && (e.data.turnId === turnIds[1] || e.data.alternativeOf === turnIds[1]));
    expect(inputsOf2).toHaveLength(4);
    expect(inputsOf2.map((e) => e.type === 'player-input.submitted@1' && e.data.text)).toEqual(Array(4).fill('Follow the river'));
    const committedIds = new Set(events.filter((e) => e.type === 'turn.committed@1').map((e) => e.type === 'turn.committed@1' && e.data.turnId));
    for (const id of [turnIds[1], ...retries.map((r) => r.turnId)]) expect(committedIds.has(id)).toBe(true);
    expect(
      events.filter((e) => e.type === 'turn.superseded@1').map((e) => e.type === 'turn.superseded@1' && [e.data.cause, e.data.turnId, e.data.byTurnId]),
    ).toEqual([
      ['retry', turnIds[1], retries[0].turnId],
      ['retry', retries[0].turnId, retries[1].turnId],
      ['retry', retries[1].turnId, retries[2].turnId],
      ['select', retries[2].turnId, retries[0].turnId],
    ]);

    // no regeneration's story request repeats the story text of the turn it re-ran
    for (const [i, r] of retries.entries()) {
      const replacedTurn = i === 0 ? turnIds[1] : retries[i - 1].turnId;
      const replacedStory =
        events
          .filter((e) => e.type === 'turn.committed@1' && e.data.turnId === replacedTurn)
          .flatMap((e) => (e.type === 'turn.committed@1' ? e.data.messages.filter((m) => m.role === 'assistant').map((m) => m.text) : [])) ?? [];
      const calls = events.filter((e) => e.type === 'llm.calling@1' && e.data.executionId === r.executionId);
      expect(calls.length).toBeGreaterThan(0);
      for (const c of calls) {
        if (c.type !== 'llm.calling@1') continue;
        expect(c.data.retryFromTurnId).toBe(replacedTurn);
        for (const text of replacedStory) if (text.trim() !== '') expect(c.data.body).not.toContain(JSON.stringify(text).slice(1, -1));
      }
    }

    // replay rebuilds the same turn_messages (and every other view)
    type Health = { projections: { lag: number }[] };
    for (let i = 0; i < 100; i++) {
      const health = (await (await fetch(`${stack.baseUrl}/health`)).json()) as Health;
      if (health.projections.every((p) => p.lag === 0)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const live = await dumpProjections(open.db);
    const { stdout } = await run('npm', ['run', 'replay'], { cwd: root, env: { ...process.env, DATABASE_URL: stack.databaseUrl, REDIS_URL: '' } });
    expect(stdout).toMatch(/turn_messages/);
    const replayed = await dumpProjections(open.db);
    expect(replayed.turn_messages).toEqual(live.turn_messages);
    expect(replayed).toEqual(live);
    expect(await history(sessionId)).toEqual(rows);

    // the prefix report numbers the regenerations as turn 2 and the next turns 3 and 4
    const report = (await call('GET', `/v1/sessions/${sessionId}/prefix-report`)).body as unknown as { turnId: string; turn: number; firstInTurn: boolean }[];
    const turnOf = new Map(report.map((r) => [r.turnId, r.turn]));
    expect([turnIds[0], turnIds[1], ...retries.map((r) => r.turnId), ...more].map((t) => turnOf.get(t))).toEqual([1, 2, 2, 2, 2, 3, 4]);
  }, 300_000);
});
