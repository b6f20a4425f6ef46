import type { INestApplication } from '@nestjs/common';
import { createApiApp } from '../../apps/api/create-api-app';
import { PlayClient } from '../../apps/play/play-client';
import { ProviderEmulator } from '../../libs/emulator';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';
import { type GatedProvider, startGatedProvider } from '../support/gated-provider';
import { openEventStream, type ReceivedEvent } from '../support/sse-client';

const ids = (events: ReceivedEvent[]) => events.map((e) => e.id);
const upTo = (events: ReceivedEvent[], last: ReceivedEvent) => events.slice(0, events.indexOf(last) + 1);
const storyText = (committed: ReceivedEvent) =>
  (committed.data.messages as { role: string; outputKind: string | null; text: string }[])
    .filter((m) => m.role === 'assistant' && m.outputKind === 'story')
    .map((m) => m.text)
    .join('');

/** `GET /v1/sessions/:id/events` on the embedded default (in-process delta bus), the model paused mid-stream by a gate. */
describe('session event stream (SSE)', () => {
  let emulator: ProviderEmulator;
  let gate: GatedProvider;
  let covel: EmbeddedEngine;
  let player: PlayClient;

  beforeAll(async () => {
    emulator = await new ProviderEmulator().start();
    gate = await startGatedProvider(emulator.url);
    covel = await startEmbedded({ COVEL_EMULATOR_URL: gate.url });
    player = await covel.newTenant('player');
  }, 60_000);

  afterAll(async () => {
    await covel?.stop();
    await gate?.close();
    await emulator?.stop();
  });

  it('sends the story text as deltas while the model writes it, then the committed message', async () => {
    const { id } = await player.createSession({ worldId: 'emberback' });
    const hold = gate.holdNext(3);
    const stream = await openEventStream(player, id);
    expect(stream.status).toBe(200);
    const { executionId } = await player.submit(id, 'Look around');
    await hold.reached;
    const first = await stream.until((e) => e.type === 'delta' && e.data.executionId === executionId);
    // the model is paused mid-reply: nothing is committed yet, the text is on its way already (the opening is turn 0's)
    expect(stream.events.some((e) => e.type === 'committed')).toBe(false);
    expect((await player.messages(id)).some((m) => m.role === 'assistant' && m.turnId !== stream.events[0].data.turnId)).toBe(false);
    const call = stream.events.find((e) => e.type === 'call' && e.data.callId === first.data.callId)!;
    expect(first.id).toBe(`${call.id}-1`);
    hold.release();
    const committed = await stream.until((e) => e.type === 'committed' && e.data.executionId === executionId);
    const deltas = stream.events.filter((e) => e.type === 'delta' && e.data.executionId === executionId);
    // coalesced (one per 50 ms): at least the one sent while the model was paused, and the rest after it
    expect(deltas.length).toBeGreaterThanOrEqual(2);
    expect(deltas.map((d) => d.data.seq)).toEqual(deltas.map((_, i) => i + 1));
    expect(
      deltas
        .map((d) => d.data.text)
        .join('')
        .trim(),
    ).toBe(storyText(committed).trim());
    expect(stream.events.indexOf(deltas.at(-1)!)).toBeLessThan(stream.events.indexOf(committed));
    // log ids are positions, in order; delta ids never collide with them
    const logIds = stream.events.filter((e) => e.type !== 'delta').map((e) => Number(e.id));
    expect(logIds).toEqual([...logIds].sort((a, b) => a - b));
    expect(new Set(ids(stream.events)).size).toBe(stream.events.length);
    stream.close();
  }, 30_000);

  it("a new session's stream starts with its opening (turn 0's story message, no execution), before any turn; none without one", async () => {
    const { id } = await player.createSession({ worldId: 'emberback' });
    const [message] = await player.messages(id);
    const stream = await openEventStream(player, id);
    const opening = await stream.until((e) => e.type === 'opening');
    expect(stream.events[0]).toBe(opening);
    expect(opening.data).toEqual({
      turnId: message.turnId,
      messageId: expect.any(String),
      openingIndex: 0,
      role: 'assistant',
      outputKind: 'story',
      text: message.text,
    });
    const { executionId } = await player.submit(id, 'Look around');
    await stream.until((e) => e.type === 'committed' && e.data.executionId === executionId);
    expect(stream.events.filter((e) => e.type === 'opening')).toHaveLength(1);
    stream.close();
    const without = await player.createSession({ worldId: 'emberback', opening: null });
    const quiet = await openEventStream(player, without.id);
    const { executionId: next } = await player.submit(without.id, 'Look around');
    await quiet.until((e) => e.type === 'committed' && e.data.executionId === next);
    expect(quiet.events.some((e) => e.type === 'opening')).toBe(false);
    quiet.close();
  }, 30_000);

  it('a stream resumed with Last-Event-ID mid-turn gets the rest exactly once', async () => {
    const { id } = await player.createSession({ worldId: 'emberback' });
    const whole = await openEventStream(player, id);
    const hold = gate.holdNext(4);
    const first = await openEventStream(player, id);
    const { executionId } = await player.submit(id, 'Walk to the river');
    await hold.reached;
    await first.until((e) => e.type === 'delta' && e.data.executionId === executionId);
    first.close();
    const lastId = first.events.at(-1)!.id!;
    expect(lastId).toMatch(/^\d+-\d+$/); // resumed from inside the call
    hold.release();
    const resumed = await openEventStream(player, id, lastId);
    const end = await resumed.until((e) => e.type === 'committed' && e.data.executionId === executionId);
    const wholeEnd = await whole.until((e) => e.type === 'committed' && e.data.executionId === executionId);
    expect([...ids(first.events), ...ids(upTo(resumed.events, end))]).toEqual(ids(upTo(whole.events, wholeEnd)));
    expect(resumed.events.filter((e) => e.type === 'delta').length).toBeGreaterThan(0);
    // resumed from a log id: the log after it, nothing before
    const fromCommit = await openEventStream(player, id, wholeEnd.id);
    const fromStart = await openEventStream(player, id, '0');
    await fromStart.until((e) => e.id === wholeEnd.id);
    expect(fromCommit.events.some((e) => Number(e.id) <= Number(wholeEnd.id))).toBe(false);
    for (const s of [whole, resumed, fromCommit, fromStart]) s.close();
  }, 30_000);

  it("another tenant's session is a 404, as is an id that is no session's", async () => {
    const { id } = await player.createSession({});
    const other = await covel.newTenant('other');
    const foreign = await openEventStream(other, id);
    expect(foreign.status).toBe(404);
    expect((await openEventStream(player, 'not-a-uuid')).status).toBe(404);
    const unauthenticated = await openEventStream(new PlayClient(covel.baseUrl, 'cvl_wrong'), id);
    expect(unauthenticated.status).toBe(401);
  });

  it('a stream whose API key is revoked ends within a few seconds (checked at each heartbeat); another key of the tenant keeps its own', async () => {
    const { id } = await player.createSession({});
    const tenant = (await covel.engine.tenants.authenticate(player.authHeaders().authorization.slice('Bearer '.length)))!.tenant;
    const made = await covel.engine.tenants.createKey({ tenantId: tenant.id, name: 'stream reader', scopes: ['read'], by: 'operator' });
    const app: INestApplication = await createApiApp(covel.engine, { logger: false, sessionEvents: { pollIntervalMs: 50, heartbeatMs: 200 } });
    await app.listen(0, '127.0.0.1');
    try {
      const baseUrl = (await app.getUrl()).replace('[::1]', '127.0.0.1');
      const stream = await openEventStream(new PlayClient(baseUrl, made.apiKey), id, undefined, baseUrl);
      const kept = await openEventStream(player, id, undefined, baseUrl);
      expect([stream.status, kept.status]).toEqual([200, 200]);
      while (stream.comments < 2) await new Promise((r) => setTimeout(r, 20));
      await covel.engine.tenants.revokeKey({ tenantId: tenant.id, keyId: made.key.id, by: 'operator', keepLastAdmin: false });
      const revokedAt = Date.now();
      await stream.ended;
      expect(Date.now() - revokedAt).toBeLessThan(3_000);
      // the other key's stream goes on
      const before = kept.comments;
      while (kept.comments < before + 3) await new Promise((r) => setTimeout(r, 20));
    } finally {
      await app.close();
    }
  }, 30_000);

  it('sends heartbeats and ends the stream cleanly when the API closes', async () => {
    const { id } = await player.createSession({});
    const app: INestApplication = await createApiApp(covel.engine, { logger: false, sessionEvents: { pollIntervalMs: 50, heartbeatMs: 20 } });
    await app.listen(0, '127.0.0.1');
    const baseUrl = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    const stream = await openEventStream(player, id, undefined, baseUrl);
    expect(stream.status).toBe(200);
    while (stream.comments < 2) await new Promise((r) => setTimeout(r, 20));
    await app.close();
    await stream.ended; // the server ended it (app.close() would wait for ever on an open stream)
  }, 30_000);
});
