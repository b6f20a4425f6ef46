import { PlayClient } from '../../apps/play/play-client';
import { ProviderEmulator } from '../../libs/emulator';
import { isWellFormedText } from '../../libs/text';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';
import { openEventStream } from '../support/sse-client';
import { clientClosed, deltasOf, endsOf, LONG_STORY, postCancel, requestWith, SHORT_STORY, SLOW_MARK, sleep, storyScript } from '../support/cancel';
import { auditedIdentical } from '../support/turns';

interface Row {
  turnId: string;
  role: string;
  sourceType: string;
  outputKind: string | null;
  text: string;
  messageId: string;
}

/**
 * Stop (`POST /v1/executions/:id/cancel`) on the embedded default (PGlite, in-process queue), the
 * model the emulator over HTTP writing a ~3 s story a word every 100 ms.
 */
describe('stop a turn (embedded default)', () => {
  let emulator: ProviderEmulator;
  let covel: EmbeddedEngine;
  let player: PlayClient;
  let apiKey: string;
  /** Who the log says acted: the key (`key:<id>`). */
  let by: string;
  let otherKey: string;

  beforeAll(async () => {
    emulator = await new ProviderEmulator({ chunkDelayMs: 100, script: storyScript() }).start();
    covel = await startEmbedded({ COVEL_EMULATOR_URL: emulator.url });
    const a = await covel.engine.tenants.create('a');
    [apiKey, by] = [a.apiKey, `key:${a.key.id}`];
    player = new PlayClient(covel.baseUrl, apiKey);
    otherKey = (await covel.engine.tenants.create('b')).apiKey;
  }, 60_000);

  afterAll(async () => {
    await covel?.stop();
    await emulator?.stop();
  });

  const newSession = async () => (await player.createSession({ worldId: 'emberback', plugins: ['narrator'] })).id;
  const history = (sessionId: string) => player.request<Row[]>('GET', `/v1/sessions/${sessionId}/messages`);
  const cancel = (executionId: string, options: Parameters<typeof postCancel>[3] = {}, key = apiKey) => postCancel(covel.baseUrl, key, executionId, options);

  it('cancel 200 ms into a streamed 3 s turn: the model call is aborted, nothing is committed, the next input commits', async () => {
    const sessionId = await newSession();
    const stream = await openEventStream(player, sessionId);
    const input = `${SLOW_MARK} ring the bell`;
    const { executionId, turnId } = await player.submit(sessionId, input);
    await stream.until((e) => e.type === 'delta' && e.data.executionId === executionId);
    await sleep(200);
    const answer = await cancel(executionId);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ executionId, turnId, status: 'cancelled', keepPartial: false });

    // ended: the long-poll answers it at once, the stream says so after the deltas it sent
    expect(await player.waitFor(executionId, 10_000)).toBe('cancelled');
    const stopped = await stream.until((e) => e.type === 'cancelled' && e.data.executionId === executionId);
    expect(stopped.data).toEqual({ executionId, turnId, status: 'cancelled', keepPartial: false, by });
    expect(stream.events.indexOf(stopped)).toBeGreaterThan(stream.events.indexOf(deltasOf(stream, executionId).at(-1)!));

    // the emulator saw its client (the SDK) close the connection before the reply ended
    const call = await requestWith(emulator.requests, input);
    const closed = await clientClosed(call);
    expect(closed).toBeDefined();
    expect(closed!.eventsSent).toBeLessThan(closed!.events);

    const events = await covel.engine.store.readStream(sessionId);
    expect(endsOf(events, executionId)).toEqual({ committed: 0, cancelled: 1 });
    expect(events.some((e) => e.type === 'llm.responded@1' && e.data.executionId === executionId)).toBe(false);
    expect((await history(sessionId)).some((m) => m.turnId === turnId)).toBe(false);

    // the session takes its next input: it commits, its request reads a history without the stopped turn
    const next = await player.submit(sessionId, 'Look around');
    expect(await player.waitFor(next.executionId, 20_000)).toBe('committed');
    const rows = await history(sessionId);
    expect(rows.filter((m) => m.turnId === next.turnId).map((m) => m.text)).toEqual(['Look around', SHORT_STORY]);
    const after = await covel.engine.store.readStream(sessionId);
    const nextCall = after.find((e) => e.type === 'llm.calling@1' && e.data.executionId === next.executionId);
    expect(nextCall?.type === 'llm.calling@1' && nextCall.data.body.includes(SLOW_MARK)).toBe(false);
    expect(await auditedIdentical(covel.engine, sessionId, [next.turnId])).toEqual([true]);
    stream.close();
  }, 60_000);

  it('keepPartial keeps the streamed prefix as the turn’s story text (emoji and CJK whole), and the next request reads it', async () => {
    const sessionId = await newSession();
    const stream = await openEventStream(player, sessionId);
    const input = `${SLOW_MARK} wake the dragon`;
    const { executionId, turnId } = await player.submit(sessionId, input);
    await stream.until((e) => e.type === 'delta' && e.data.executionId === executionId && Number(e.data.seq) >= 4);
    const seen = deltasOf(stream, executionId)
      .map((d) => String(d.data.text))
      .join('');
    const answer = await cancel(executionId, { body: { keepPartial: true } });
    expect(answer.status).toBe(200);
    const messages = answer.body.messages as Row[];
    expect(messages.map((m) => [m.role, m.sourceType, m.outputKind])).toEqual([
      ['user', 'player', null],
      ['assistant', 'runtime', 'story'],
    ]);
    expect(messages[0].text).toBe(input);
    const kept = messages[1].text;
    // what was streamed when the cancel was recorded (at least what this client had seen), never cut inside a character
    expect(kept.startsWith(seen.trimEnd())).toBe(true);
    expect(LONG_STORY.startsWith(kept)).toBe(true);
    expect(kept.length).toBeLessThan(LONG_STORY.length);
    expect(isWellFormedText(kept)).toBe(true);
    expect(kept).toContain('🐉');
    expect(kept).toContain('灰の村');

    expect(await player.waitFor(executionId, 10_000)).toBe('cancelled');
    const stopped = await stream.until((e) => e.type === 'cancelled' && e.data.executionId === executionId);
    expect((stopped.data.messages as Row[]).map((m) => m.text)).toEqual([input, kept]);
    // the history holds the kept turn as a committed one
    const rows = (await history(sessionId)).filter((m) => m.turnId === turnId);
    expect(rows.map((m) => [m.messageId, m.role, m.outputKind, m.text])).toEqual(messages.map((m) => [m.messageId, m.role, m.outputKind, m.text]));
    const events = await covel.engine.store.readStream(sessionId);
    expect(endsOf(events, executionId)).toEqual({ committed: 0, cancelled: 1 });

    // the next request reads the kept text in its history; the audit re-derives it from the log alone
    const next = await player.submit(sessionId, 'Look around');
    expect(await player.waitFor(next.executionId, 20_000)).toBe('committed');
    const after = await covel.engine.store.readStream(sessionId);
    const nextCall = after.find((e) => e.type === 'llm.calling@1' && e.data.executionId === next.executionId);
    expect(nextCall?.type === 'llm.calling@1' && nextCall.data.body.includes(JSON.stringify(kept).slice(1, -1))).toBe(true);
    expect(await auditedIdentical(covel.engine, sessionId, [next.turnId])).toEqual([true]);
    stream.close();
  }, 60_000);

  it('keepPartial before any story text was streamed keeps nothing: no turn is committed', async () => {
    const sessionId = await newSession();
    const first = await player.submit(sessionId, `${SLOW_MARK} count the stars`);
    const queued = await player.submit(sessionId, 'Wait');
    // the second input waits behind the first: no model call of it, no story text
    const answer = await cancel(queued.executionId, { body: { keepPartial: true } });
    expect(answer.body).toEqual({ executionId: queued.executionId, turnId: queued.turnId, status: 'cancelled', keepPartial: true });
    expect((await cancel(first.executionId)).status).toBe(200);
    const events = await covel.engine.store.readStream(sessionId);
    expect(events.some((e) => e.type === 'execution.started@1' && e.data.executionId === queued.executionId)).toBe(false);
    expect((await history(sessionId)).filter((m) => m.role === 'user')).toEqual([]);
  }, 60_000);

  it('a queued execution is cancelled without running; cancelling the running one lets the next input run at once', async () => {
    const sessionId = await newSession();
    const stream = await openEventStream(player, sessionId);
    const running = await player.submit(sessionId, `${SLOW_MARK} climb the tower`);
    const queued = await player.submit(sessionId, 'Knock');
    const last = await player.submit(sessionId, 'Listen');
    await stream.until((e) => e.type === 'delta' && e.data.executionId === running.executionId);
    expect((await cancel(queued.executionId)).status).toBe(200);
    expect((await player.execution(queued.executionId)).status).toBe('cancelled');
    expect((await player.execution(running.executionId)).status).toBe('running');
    expect((await cancel(running.executionId)).status).toBe(200);
    expect(await player.waitFor(last.executionId, 20_000)).toBe('committed');
    const events = await covel.engine.store.readStream(sessionId);
    expect(events.some((e) => e.type === 'execution.started@1' && e.data.executionId === queued.executionId)).toBe(false);
    expect(endsOf(events, queued.executionId)).toEqual({ committed: 0, cancelled: 1 });
    expect((await history(sessionId)).map((m) => m.text)).toEqual([expect.any(String), 'Listen', SHORT_STORY]);
    stream.close();
  }, 60_000);

  it('404 for another tenant’s or an unknown execution; 409 EXECUTION_ENDED naming how an ended one ended; a bad body is a 400 naming the field', async () => {
    const sessionId = await newSession();
    const committed = await player.submit(sessionId, 'Light the lantern');
    expect(await player.waitFor(committed.executionId, 20_000)).toBe('committed');
    const slow = await player.submit(sessionId, `${SLOW_MARK} sing`);

    const foreign = await cancel(slow.executionId, {}, otherKey);
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('EXECUTION_NOT_FOUND');
    expect((await cancel('7d3f5a52-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await cancel('not-an-id')).status).toBe(404);
    const bad = await cancel(slow.executionId, { body: { keepPartial: 'yes' } });
    expect(bad.status).toBe(400);
    expect(bad.body.issues).toEqual([{ path: 'keepPartial', message: expect.any(String) }]);
    expect((await cancel(slow.executionId, { body: { keep: true } })).status).toBe(400);
    expect((await player.execution(slow.executionId)).status).not.toBe('cancelled');

    const ended = await cancel(committed.executionId);
    expect(ended.status).toBe(409);
    expect(ended.body).toMatchObject({ code: 'EXECUTION_ENDED' });
    expect(String(ended.body.message)).toContain('committed');
    expect((await cancel(slow.executionId)).status).toBe(200);

    emulator.injectFault({ status: 400, times: 1, message: 'context too long' });
    const failing = await player.submit(sessionId, 'Shout');
    await expect(player.waitFor(failing.executionId, 20_000)).rejects.toThrow(/failed/);
    const failed = await cancel(failing.executionId);
    expect(failed.status).toBe(409);
    expect(String(failed.body.message)).toContain('failed');
    const events = await covel.engine.store.readStream(sessionId);
    expect(endsOf(events, committed.executionId)).toEqual({ committed: 1, cancelled: 0 });
    expect(events.filter((e) => e.type === 'execution.cancelled@1')).toHaveLength(1);
  }, 60_000);

  it('idempotent: the same key answers the first cancel, so does a repeat without one; the key for another body is a 422', async () => {
    const sessionId = await newSession();
    const { executionId } = await player.submit(sessionId, `${SLOW_MARK} hide`);
    const first = await cancel(executionId, { idempotencyKey: 'stop-1' });
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await cancel(executionId, { idempotencyKey: 'stop-1' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const keyless = await cancel(executionId);
    expect(keyless.status).toBe(200);
    expect(keyless.body).toEqual(first.body);
    const otherBody = await cancel(executionId, { idempotencyKey: 'stop-1', body: { keepPartial: true } });
    expect(otherBody.status).toBe(422);
    expect(otherBody.body.code).toBe('IDEMPOTENCY_KEY_MISMATCH');
    const events = await covel.engine.store.readStream(sessionId);
    expect(endsOf(events, executionId)).toEqual({ committed: 0, cancelled: 1 });
  }, 60_000);
});
