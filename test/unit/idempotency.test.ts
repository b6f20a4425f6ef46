import { connect } from 'node:net';
import { PlayClient } from '../../apps/play/play-client';
import { startEmbedded, type EmbeddedEngine } from '../support/embedded';

interface Answer {
  status: number;
  body: Record<string, unknown>;
  replayed: boolean;
}

/** `Idempotency-Key` on POST /v1/sessions and POST /v1/sessions/:id/inputs, on the embedded default. */
describe('idempotency keys (embedded default)', () => {
  let covel: EmbeddedEngine;
  let keyA: string;
  let keyB: string;
  let tenantA: string;
  beforeAll(async () => {
    covel = await startEmbedded();
    const a = await covel.engine.tenants.create('a');
    keyA = a.apiKey;
    tenantA = a.tenant.id;
    keyB = (await covel.engine.tenants.create('b')).apiKey;
  });
  afterAll(() => covel.stop());

  async function post(apiKey: string, path: string, body: unknown, idempotencyKey?: string): Promise<Answer> {
    const res = await fetch(`${covel.baseUrl}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${apiKey}`,
        'content-type': 'application/json',
        ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
      },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown>, replayed: res.headers.get('idempotent-replayed') === 'true' };
  }
  const createSession = (apiKey: string, body: unknown = {}, key?: string) => post(apiKey, '/v1/sessions', body, key);
  const submit = (apiKey: string, sessionId: string, text: string, key?: string) => post(apiKey, `/v1/sessions/${sessionId}/inputs`, { text }, key);
  const inputsOf = async (sessionId: string) => (await covel.engine.store.readStream(sessionId)).filter((e) => e.type === 'player-input.submitted@1');
  const newSession = async () => (await createSession(keyA)).body.id as string;

  it('a repeated input with the same key and body answers the first answer and appends nothing', async () => {
    const id = await newSession();
    const first = await submit(keyA, id, 'Light the lantern', 'turn-1');
    expect(first).toMatchObject({ status: 202, replayed: false });
    const again = await submit(keyA, id, 'Light the lantern', 'turn-1');
    expect(again).toEqual({ status: 202, body: first.body, replayed: true });
    await new PlayClient(covel.baseUrl, keyA).waitFor(first.body.executionId as string, 20_000);
    // after the commit too
    expect(await submit(keyA, id, 'Light the lantern', 'turn-1')).toEqual({ status: 202, body: first.body, replayed: true });
    expect(await inputsOf(id)).toHaveLength(1);
    const messages = await new PlayClient(covel.baseUrl, keyA).messages(id);
    expect(messages.map((m) => [m.turnId, m.role])).toEqual([
      [first.body.turnId, 'user'],
      [first.body.turnId, 'assistant'],
    ]);
  });

  it('the same key with another body, session or endpoint is 422 naming the header, and appends nothing', async () => {
    const id = await newSession();
    const other = await newSession();
    await submit(keyA, id, 'open the door', 'door');
    for (const answer of [
      await submit(keyA, id, 'close the door', 'door'),
      await submit(keyA, other, 'open the door', 'door'),
      await createSession(keyA, {}, 'door'),
    ]) {
      expect(answer.status).toBe(422);
      expect(answer.body).toMatchObject({ code: 'IDEMPOTENCY_KEY_MISMATCH', issues: [{ path: 'Idempotency-Key' }] });
      expect(answer.body.message).toMatch(/^Idempotency-Key: /);
    }
    expect(await inputsOf(id)).toHaveLength(1);
    expect(await inputsOf(other)).toHaveLength(0);
  });

  it("another tenant's same key is independent", async () => {
    const idA = await newSession();
    const idB = (await createSession(keyB)).body.id as string;
    const a = await submit(keyA, idA, 'same words', 'shared-key');
    const b = await submit(keyB, idB, 'same words', 'shared-key');
    expect([a.status, b.status, b.replayed]).toEqual([202, 202, false]);
    expect(b.body.executionId).not.toBe(a.body.executionId);
    // and tenant B cannot learn tenant A's answer (nor its session) through the key
    expect(await submit(keyB, idA, 'same words', 'shared-key')).toMatchObject({ status: 404 });
    expect(await inputsOf(idA)).toHaveLength(1);
    expect(await inputsOf(idB)).toHaveLength(1);
  });

  it('concurrent posts with the same key: exactly one append, every answer the same', async () => {
    const id = await newSession();
    const answers = await Promise.all(Array.from({ length: 12 }, () => submit(keyA, id, 'all at once', 'race')));
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set([202]));
    expect(new Set(answers.map((a) => JSON.stringify(a.body))).size).toBe(1);
    expect(answers.filter((a) => !a.replayed)).toHaveLength(1);
    const inputs = await inputsOf(id);
    expect(inputs).toHaveLength(1);
    expect(inputs[0].data).toMatchObject(answers[0].body);
    await new PlayClient(covel.baseUrl, keyA).waitFor(answers[0].body.executionId as string, 20_000);
    const committed = (await covel.engine.store.readStream(id)).filter((e) => e.type === 'turn.committed@1');
    expect(committed).toHaveLength(1);
  });

  it('session creation: a repeat answers the first session; another body is 422; concurrent repeats create one session', async () => {
    const first = await createSession(keyA, { locale: 'en' }, 'new-session');
    expect(first).toMatchObject({ status: 201, replayed: false });
    expect(await createSession(keyA, { locale: 'en' }, 'new-session')).toEqual({ status: 201, body: first.body, replayed: true });
    expect((await createSession(keyA, { locale: 'zh-Hans' }, 'new-session')).status).toBe(422);
    const tenantB = await createSession(keyB, { locale: 'en' }, 'new-session');
    expect(tenantB).toMatchObject({ status: 201, replayed: false });
    expect(tenantB.body.id).not.toBe(first.body.id);

    const answers = await Promise.all(Array.from({ length: 10 }, () => createSession(keyA, { worldId: 'emberback' }, 'one-world')));
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set([201]));
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    const found = await covel.engine.store.findByIdempotencyKey(tenantA, 'one-world');
    expect(found?.event).toMatchObject({ type: 'session.created@1', streamId: answers[0].body.id, streamVersion: 1 });
  });

  it('a malformed key is 400 naming the header; a 255-character key is fine', async () => {
    const id = await newSession();
    for (const key of ['', ' ', 'x'.repeat(256), 'tab\there']) {
      const answer = await submit(keyA, id, 'malformed', key);
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ issues: [{ path: 'Idempotency-Key' }] });
    }
    expect((await createSession(keyA, {}, '')).status).toBe(400);
    // a C1 control and a duplicated header, which fetch will not send (DEL is refused by Node's parser: 400 too)
    expect((await rawPost(`/v1/sessions/${id}/inputs`, ['Idempotency-Key: a\x7fb'])).status).toBe(400);
    for (const lines of [['Idempotency-Key: a\x85b'], ['Idempotency-Key: one', 'Idempotency-Key: two']]) {
      const answer = await rawPost(`/v1/sessions/${id}/inputs`, lines);
      expect(answer.status).toBe(400);
      expect(answer.text).toContain('Idempotency-Key');
    }
    expect(await inputsOf(id)).toHaveLength(0);
    expect((await submit(keyA, id, 'long key', 'k'.repeat(255))).status).toBe(202);
  });

  /** Posts `{"text":"x"}` over a raw socket with extra header lines (bytes fetch refuses to send); resolves the status and the raw response. */
  function rawPost(path: string, headerLines: string[]): Promise<{ status: number; text: string }> {
    const url = new URL(covel.baseUrl);
    const body = JSON.stringify({ text: 'x' });
    const head = [
      `POST ${path} HTTP/1.1`,
      `Host: ${url.host}`,
      `Authorization: Bearer ${keyA}`,
      'Content-Type: application/json',
      `Content-Length: ${body.length}`,
      'Connection: close',
      ...headerLines,
    ];
    return new Promise((resolve, reject) => {
      const socket = connect({ host: url.hostname, port: Number(url.port) }, () => socket.end(Buffer.from(`${head.join('\r\n')}\r\n\r\n${body}`, 'latin1')));
      let response = '';
      socket.on('data', (d) => (response += d.toString('latin1')));
      socket.on('error', reject);
      socket.on('close', () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1] ?? 0), text: response }));
    });
  }
});
