import { type PlayClient } from '../../apps/play/play-client';
import { startEmbedded, type EmbeddedEngine } from '../support/embedded';

/** The HTTP API on the embedded default (PGlite, in-process queue, provider emulator). */
describe('API on the embedded default', () => {
  let covel: EmbeddedEngine;
  let a: PlayClient;
  let b: PlayClient;
  beforeAll(async () => {
    covel = await startEmbedded();
    a = await covel.newTenant('a');
    b = await covel.newTenant('b');
  });
  afterAll(() => covel.stop());

  const raw = (path: string, init: RequestInit = {}) => fetch(`${covel.baseUrl}${path}`, init);

  it('GET /health', async () => {
    const res = await raw('/health');
    expect(res.status).toBe(200);
    const body = (await res.json()) as { projections: { kind: string; name: string; state: string; failures: unknown[] }[] };
    expect(body).toEqual({
      status: 'ok',
      database: { kind: 'pglite', ok: true, latencyMs: expect.any(Number) },
      queue: { kind: 'in-process', ok: true, state: 'running' },
      projections: expect.any(Array),
      // every model slot, none slow (test/unit/provider-deadlines-embedded.test.ts: one that is)
      providers: [
        { slot: 'story', state: 'ok', lastDeadlineMiss: null },
        { slot: 'fast', state: 'ok', lastDeadlineMiss: null },
      ],
    });
    // the async projections (the inline ones are written with each append: never behind, never stopped)
    expect(body.projections.map((p) => [p.name, p.state, p.failures])).toEqual(
      ['trace_events', 'prefix_reports', 'usage'].map((name) => [name, 'running', []]),
    );
  });

  it('a request without a valid key is 401', async () => {
    expect((await raw('/v1/sessions', { method: 'POST' })).status).toBe(401);
    expect((await raw('/v1/sessions', { method: 'POST', headers: { authorization: 'Bearer nope' } })).status).toBe(401);
  });

  it('bad input is a 400 naming the field path', async () => {
    await expect(a.request('POST', '/v1/sessions', { locale: 'en_US!!' })).rejects.toThrow(/400 locale:/);
    const { id } = await a.createSession();
    await expect(a.request('POST', `/v1/sessions/${id}/inputs`, { text: '' })).rejects.toThrow(/400 text: must not be empty/);
    await expect(a.request('POST', `/v1/sessions/${id}/inputs`, { text: 3 })).rejects.toThrow(/400 text:/);
    expect(await a.messages(id)).toEqual([]);
  });

  it('unknown ids are 404', async () => {
    await expect(a.request('GET', '/v1/sessions/nope/messages')).rejects.toThrow(/404/);
    await expect(a.submit('nope', 'hi')).rejects.toThrow(/404/);
    await expect(a.execution('nope')).rejects.toThrow(/404/);
  });

  it('plays a turn: 202, then committed with one user and one assistant row', async () => {
    const { id } = await a.createSession({ locale: 'en' });
    const { executionId, turnId } = await a.submit(id, 'Light the lantern');
    await a.waitFor(executionId, 20_000);
    const messages = await a.messages(id);
    expect(messages.map((m) => [m.turnId, m.role])).toEqual([
      [turnId, 'user'],
      [turnId, 'assistant'],
    ]);
    expect(messages[1].text).toMatch(/you light the lantern/);
    const calls = await a.request<{ turnId: string; runtimeId: string; request: { messages: { role: string; content: string }[] } }[]>(
      'GET',
      `/v1/sessions/${id}/llm-calls`,
    );
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ turnId, runtimeId: 'narrator' });
    // the recorded body is exactly what reached the provider
    const sent = covel.engine.emulator!.requests.filter((r) => r.raw.includes('Light the lantern'));
    expect(sent.map((r) => r.body)).toEqual([calls[0].request]);
    expect(sent.map((r) => r.raw)).toEqual([(calls[0] as unknown as { requestText: string }).requestText]);
  });

  it("tenant A's key cannot read or write tenant B's session", async () => {
    const { id } = await b.createSession();
    const { executionId } = await b.submit(id, 'secret move');
    await b.waitFor(executionId, 20_000);
    await expect(a.messages(id)).rejects.toThrow(/404/);
    await expect(a.request('GET', `/v1/sessions/${id}/llm-calls`)).rejects.toThrow(/404/);
    await expect(a.submit(id, 'intrude')).rejects.toThrow(/404/);
    await expect(a.execution(executionId)).rejects.toThrow(/404/);
    expect((await b.messages(id)).map((m) => m.text)).not.toContain('intrude');
    expect(await b.messages(id)).toHaveLength(2);
  });

  it('two inputs posted at once to one session are both committed, one after the other', async () => {
    const { id } = await a.createSession();
    const [first, second] = await Promise.all([a.submit(id, 'first move'), a.submit(id, 'second move')]);
    await Promise.all([a.waitFor(first.executionId, 20_000), a.waitFor(second.executionId, 20_000)]);
    const messages = await a.messages(id);
    expect(messages).toHaveLength(4);
    const turns = [...new Set(messages.map((m) => m.turnId))];
    expect(turns).toHaveLength(2);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    // serial: the second execution started only after the first committed
    const events = await covel.engine.store.readStream(id);
    const types = events.map((e) => e.type).filter((t) => t === 'execution.started@1' || t === 'turn.committed@1');
    expect(types).toEqual(['execution.started@1', 'turn.committed@1', 'execution.started@1', 'turn.committed@1']);
    // the second turn's request carries the first turn as history
    const calls = await a.request<{ request: { messages: { content: string }[] } }[]>('GET', `/v1/sessions/${id}/llm-calls`);
    expect(calls[1].request.messages.map((m) => m.content)).toEqual(expect.arrayContaining([messages[0].text, messages[1].text]));
  });
});
