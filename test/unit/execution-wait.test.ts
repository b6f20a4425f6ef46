import type { PlayClient } from '../../apps/play/play-client';
import { startEmbedded, type EmbeddedEngine } from '../support/embedded';

interface Execution {
  executionId: string;
  status: string;
  error: { code: string; message: string } | null;
}

/**
 * `GET /v1/executions/:id?waitMs=` on the embedded default (PGlite: its LISTEN/NOTIFY). The emulator
 * takes 1.5 s per call, so a turn is still pending when a wait starts (checked with waitMs=0 first).
 */
describe('long-polling an execution (waitMs)', () => {
  let covel: EmbeddedEngine;
  let a: PlayClient;
  let b: PlayClient;
  beforeAll(async () => {
    covel = await startEmbedded({ COVEL_EMULATOR_DELAY_MS: '1500' });
    a = await covel.newTenant('a');
    b = await covel.newTenant('b');
  });
  afterAll(() => covel.stop());

  const get = (client: PlayClient, executionId: string, query = '') => client.request<Execution>('GET', `/v1/executions/${executionId}${query}`);

  it('answers once the turn is committed', async () => {
    const { id } = await a.createSession();
    const { executionId } = await a.submit(id, 'Light the lantern');
    expect((await get(a, executionId, '?waitMs=0')).status).toMatch(/^(queued|running)$/);
    const ended = await get(a, executionId, '?waitMs=30000');
    expect(ended).toMatchObject({ executionId, status: 'committed', error: null });
    expect((await a.messages(id)).map((m) => m.role)).toEqual(['user', 'assistant']);
  }, 25_000);

  it('answers once the turn has failed', async () => {
    const { id } = await a.createSession();
    covel.engine.emulator!.injectFault({ status: 400, times: 1, message: 'context too long' });
    const { executionId } = await a.submit(id, 'Shout');
    expect((await get(a, executionId, '?waitMs=0')).status).toMatch(/^(queued|running)$/);
    expect(await get(a, executionId, '?waitMs=30000')).toMatchObject({ status: 'failed', error: { code: 'PROVIDER_400' } });
  }, 25_000);

  it('after waitMs, answers the current state of a turn still running', async () => {
    const { id } = await a.createSession();
    const { executionId } = await a.submit(id, 'Wait a little');
    expect((await get(a, executionId, '?waitMs=50')).status).toMatch(/^(queued|running)$/);
    await a.waitFor(executionId, 30_000); // the client's own wait is a loop of long-polls
    expect((await get(a, executionId)).status).toBe('committed');
  }, 25_000);

  it('a bad waitMs is a 400 naming waitMs', async () => {
    const { id } = await a.createSession();
    const { executionId } = await a.submit(id, 'Count');
    for (const bad of ['-1', '30001', '1.5', 'abc', '', '1e3', '99999999999', '5&waitMs=6']) {
      await expect(get(a, executionId, `?waitMs=${bad}`)).rejects.toThrow(/400 waitMs: must be an integer from 0 to 30000/);
    }
    await a.waitFor(executionId, 30_000);
  }, 25_000);

  it("another tenant's execution is a 404 at once, with or without waitMs", async () => {
    const { id } = await b.createSession();
    const { executionId } = await b.submit(id, 'secret move');
    await expect(get(a, executionId, '?waitMs=30000')).rejects.toThrow(/404/);
    await expect(get(a, executionId)).rejects.toThrow(/404/);
    await b.waitFor(executionId, 30_000);
    await expect(get(a, executionId, '?waitMs=30000')).rejects.toThrow(/404/);
    expect((await get(b, executionId, '?waitMs=30000')).status).toBe('committed');
    // a 404 that waited for waitMs would run past this test's 20 s
  }, 20_000);
});
