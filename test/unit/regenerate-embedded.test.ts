import { randomUUID } from 'node:crypto';
import { PlayClient } from '../../apps/play/play-client';
import { startEmbedded, type EmbeddedEngine } from '../support/embedded';
import { auditedIdentical, playTurns } from '../support/turns';

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

interface AlternativesAnswer {
  turnId: string;
  alternatives: { id: string; turnId: string; status: string; preview: string; selected: boolean }[];
}

/** Issue 16 part 1 on the embedded default: the API's errors and one regeneration end to end. */
describe('regenerate a turn (embedded default)', () => {
  let covel: EmbeddedEngine;
  let keyA: string;
  let tenantA: string;
  let keyB: string;
  beforeAll(async () => {
    // no sweeper pass during the tests: an input appended without its job stays pending
    covel = await startEmbedded({ COVEL_SWEEP_INTERVAL_MS: '3600000' });
    const a = await covel.engine.tenants.create('a');
    [keyA, tenantA] = [a.apiKey, a.tenant.id];
    keyB = (await covel.engine.tenants.create('b')).apiKey;
  });
  afterAll(() => covel.stop());

  async function call(apiKey: string, method: 'GET' | 'POST', path: string, body?: unknown, idempotencyKey?: string): Promise<Answer> {
    const res = await fetch(`${covel.baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }
  const retry = (sessionId: string, turnId: string, key?: string, apiKey = keyA) =>
    call(apiKey, 'POST', `/v1/sessions/${sessionId}/turns/${turnId}/retry`, undefined, key);
  const select = (sessionId: string, turnId: string, body: unknown, apiKey = keyA) =>
    call(apiKey, 'POST', `/v1/sessions/${sessionId}/turns/${turnId}/select`, body);
  const alternatives = async (sessionId: string, turnId: string) =>
    (await call(keyA, 'GET', `/v1/sessions/${sessionId}/turns/${turnId}/alternatives`)).body as unknown as AlternativesAnswer;
  const clientA = () => new PlayClient(covel.baseUrl, keyA);
  /** The session's history rows as the API lists them (every field). */
  const history = (sessionId: string) =>
    clientA().request<{ turnId: string; order: number; text: string; messageId: string }[]>('GET', `/v1/sessions/${sessionId}/messages`);

  async function sessionWithTurns(texts: string[]): Promise<{ sessionId: string; turnIds: string[] }> {
    const a = clientA();
    const { id } = await a.createSession();
    return { sessionId: id, turnIds: await playTurns(a, id, texts) };
  }

  it('regenerates the latest turn: the history shows the new alternative in its place, the old one is listed and can be selected back', async () => {
    const { sessionId, turnIds } = await sessionWithTurns(['Light the lantern', 'Open the door']);
    const before = await history(sessionId);
    const { status, body } = await retry(sessionId, turnIds[1]);
    expect(status).toBe(202);
    expect(Object.keys(body).sort()).toEqual(['executionId', 'turnId']);
    expect(await clientA().waitFor(body.executionId as string, 20_000)).toBe('committed');

    const after = await history(sessionId);
    // the first turn is untouched; the second turn's rows are the regeneration's, same place, same typed input
    expect(after.slice(0, 2)).toEqual(before.slice(0, 2));
    expect(after.slice(2).map((m) => m.turnId)).toEqual(after.slice(2).map(() => body.turnId));
    expect(after.map((m) => m.order)).toEqual(before.map((m) => m.order));
    expect(after[2].text).toBe('Open the door');

    // the log keeps both; the regeneration's input names the turn it re-ran
    const events = await covel.engine.store.readStream(sessionId);
    const inputs = events.filter((e) => e.type === 'player-input.submitted@1');
    expect(inputs.map((e) => e.data)).toEqual([
      expect.objectContaining({ turnId: turnIds[0] }),
      expect.objectContaining({ turnId: turnIds[1] }),
      expect.objectContaining({ turnId: body.turnId, text: 'Open the door', retryFromTurnId: turnIds[1], alternativeOf: turnIds[1] }),
    ]);
    expect(events.filter((e) => e.type === 'turn.committed@1')).toHaveLength(3);
    // the regeneration's requests read the history without the turn it re-runs: neither its input row nor its story text
    const calls = events.filter((e) => e.type === 'llm.calling@1' && e.data.executionId === body.executionId);
    expect(calls.length).toBeGreaterThan(0);
    for (const c of calls) {
      if (c.type !== 'llm.calling@1') continue;
      expect(c.data.body).not.toContain(JSON.stringify(before[3].text).slice(1, -1));
      expect(c.data.body).toContain(JSON.stringify(before[1].text).slice(1, -1));
      expect(c.data.retryFromTurnId).toBe(turnIds[1]);
    }
    expect(events.filter((e) => e.type === 'turn.superseded@1').map((e) => e.data)).toEqual([
      expect.objectContaining({ turnId: turnIds[1], byTurnId: body.turnId, cause: 'retry', alternativeOf: turnIds[1] }),
    ]);

    // alternatives by either turn id: the original first, the regeneration selected
    const listed = await alternatives(sessionId, body.turnId as string);
    expect(listed).toEqual(await alternatives(sessionId, turnIds[1]));
    expect(listed.turnId).toBe(turnIds[1]);
    expect(listed.alternatives.map((a) => [a.turnId, a.status, a.selected])).toEqual([
      [turnIds[1], 'committed', false],
      [body.turnId, 'committed', true],
    ]);
    expect(listed.alternatives[0].preview).toBe(before[3].text.slice(0, 200));

    // select the original back: the history is the one before the regeneration
    const chosen = await select(sessionId, body.turnId as string, { alternativeId: listed.alternatives[0].id });
    expect(chosen).toEqual({ status: 200, body: { alternativeId: listed.alternatives[0].id, turnId: turnIds[1] } });
    expect(await history(sessionId)).toEqual(before);
    // the same selection again records nothing
    const count = (await covel.engine.store.readStream(sessionId)).length;
    expect((await select(sessionId, turnIds[1], { alternativeId: listed.alternatives[0].id })).status).toBe(200);
    expect(await covel.engine.store.readStream(sessionId)).toHaveLength(count);

    // every request of every alternative is rebuilt byte for byte from the log
    expect(await auditedIdentical(covel.engine, sessionId, [...turnIds, body.turnId as string])).toEqual([true, true, true]);
  });

  it('a turn that is not the latest is 409 naming the latest; unknown turns and other tenants are 404', async () => {
    const { sessionId, turnIds } = await sessionWithTurns(['Look around', 'Sit down']);
    const older = await retry(sessionId, turnIds[0]);
    expect(older.status).toBe(409);
    expect(older.body).toMatchObject({ code: 'NOT_LATEST_TURN' });
    expect(older.body.message).toContain(turnIds[1]);
    expect((await select(sessionId, turnIds[0], { alternativeId: randomUUID() })).body).toMatchObject({ code: 'NOT_LATEST_TURN' });

    expect((await retry(sessionId, randomUUID())).body).toMatchObject({ code: 'TURN_NOT_FOUND' });
    expect((await retry(sessionId, 'not-a-uuid')).status).toBe(404);
    const foreign = await retry(sessionId, turnIds[1], undefined, keyB);
    expect(foreign).toMatchObject({ status: 404, body: { code: 'SESSION_NOT_FOUND' } });
    expect((await call(keyB, 'GET', `/v1/sessions/${sessionId}/turns/${turnIds[1]}/alternatives`)).status).toBe(404);
    expect((await select(sessionId, turnIds[1], { alternativeId: randomUUID() }, keyB)).status).toBe(404);
    // an alternative the turn does not have
    expect((await select(sessionId, turnIds[1], { alternativeId: randomUUID() })).body).toMatchObject({ code: 'ALTERNATIVE_NOT_FOUND' });
    // nothing was appended by any of them
    expect((await covel.engine.store.readStream(sessionId)).filter((e) => e.type === 'player-input.submitted@1')).toHaveLength(2);
  });

  it('a bad select body is 400 naming the field', async () => {
    const { sessionId, turnIds } = await sessionWithTurns(['Wait']);
    const missing = await select(sessionId, turnIds[0], {});
    expect(missing.status).toBe(400);
    expect(missing.body.issues).toEqual([expect.objectContaining({ path: 'alternativeId' })]);
    const bad = await select(sessionId, turnIds[0], { alternativeId: 'x' });
    expect(bad.status).toBe(400);
    expect(bad.body.issues).toEqual([expect.objectContaining({ path: 'alternativeId' })]);
    const extra = await select(sessionId, turnIds[0], { alternativeId: randomUUID(), other: 1 });
    expect(extra.status).toBe(400);
  });

  it('while a turn of the session is pending, retry and select are 409 TURN_RUNNING', async () => {
    const { sessionId, turnIds } = await sessionWithTurns(['Knock']);
    // a pending input without its job (the sweeper is off): the session stays "running"
    const version = await covel.engine.store.streamVersion(sessionId);
    await covel.engine.store.append({
      tenantId: tenantA,
      streamId: sessionId,
      expectedVersion: version,
      events: [{ type: 'player-input.submitted@1', data: { executionId: randomUUID(), turnId: randomUUID(), messageId: randomUUID(), text: 'Wait' } }],
    });
    const running = await retry(sessionId, turnIds[0]);
    expect(running).toMatchObject({ status: 409, body: { code: 'TURN_RUNNING' } });
    const listed = await alternatives(sessionId, turnIds[0]);
    expect((await select(sessionId, turnIds[0], { alternativeId: listed.alternatives[0].id })).body).toMatchObject({ code: 'TURN_RUNNING' });
  });

  it('Idempotency-Key: a repeated retry answers the first execution and starts one regeneration', async () => {
    const { sessionId, turnIds } = await sessionWithTurns(['Climb']);
    const first = await retry(sessionId, turnIds[0], 'reroll-1');
    expect(first.status).toBe(202);
    const again = await retry(sessionId, turnIds[0], 'reroll-1');
    expect(again).toEqual(first);
    await clientA().waitFor(first.body.executionId as string, 20_000);
    expect(await retry(sessionId, turnIds[0], 'reroll-1')).toEqual(first);
    expect((await covel.engine.store.readStream(sessionId)).filter((e) => e.type === 'player-input.submitted@1')).toHaveLength(2);
    // the same key for another request is 422
    expect((await call(keyA, 'POST', `/v1/sessions/${sessionId}/inputs`, { text: 'x' }, 'reroll-1')).status).toBe(422);
  });
});
