import { join } from 'node:path';
import type { StoredEvent } from '../../libs/events';
import { startEmbedded, type EmbeddedEngine } from '../support/embedded';

const key = (e: StoredEvent) => ('pluginId' in e.data ? `${e.type} ${e.data.pluginId}` : e.type);

describe('turn jobs: stages and failures', () => {
  let covel: EmbeddedEngine;
  beforeAll(async () => {
    covel = await startEmbedded({ COVEL_PLUGINS_DIR: join(__dirname, '..', 'fixtures', 'staged-plugins'), COVEL_EMULATOR_DELAY_MS: '150' });
  });
  afterAll(() => covel.stop());

  it('runs stage by stage: runtimes of a stage in parallel, a barrier between stages, stageless last', async () => {
    const client = await covel.newTenant();
    const { id } = await client.createSession();
    const { executionId } = await client.submit(id, 'Open the door');
    await client.waitFor(executionId, 20_000);
    const events = (await covel.engine.store.readStream(id)).filter((e) => e.type === 'llm.calling@1' || e.type === 'runtime.output.produced@1');
    const order = events.map(key);
    // pre-turn: both calls go out before either output comes back (parallel)
    expect(order.slice(0, 2).sort()).toEqual(['llm.calling@1 mood', 'llm.calling@1 scene']);
    expect(order.slice(2, 4).sort()).toEqual(['runtime.output.produced@1 mood', 'runtime.output.produced@1 scene']);
    // barrier, then the narrative stage, then the runtime with no stage
    expect(order.slice(4)).toEqual(['llm.calling@1 narrator', 'runtime.output.produced@1 narrator', 'llm.calling@1 recap', 'runtime.output.produced@1 recap']);
    // only story output becomes an assistant row
    expect((await client.messages(id)).map((m) => [m.role, m.outputKind])).toEqual([
      ['user', null],
      ['assistant', 'story'],
    ]);
  });

  it('a provider error the provider will repeat fails the execution at once, with its cause', async () => {
    const client = await covel.newTenant();
    const { id } = await client.createSession();
    covel.engine.emulator!.injectFault({ status: 400, times: 1, message: 'context too long' });
    const { executionId } = await client.submit(id, 'Shout');
    await expect(client.waitFor(executionId, 20_000)).rejects.toThrow(/context too long/);
    const execution = await client.request<{ status: string; error: { code: string } }>('GET', `/v1/executions/${executionId}`);
    expect(execution).toMatchObject({ status: 'failed', error: { code: 'PROVIDER_400' } });
    expect(await client.messages(id)).toEqual([]);
    // the session is not stuck: the next input plays
    const next = await client.submit(id, 'Whisper');
    await client.waitFor(next.executionId, 20_000);
    expect(await client.messages(id)).toHaveLength(2);
  });

  it('a transient 503 is retried by the SDK and the turn commits', async () => {
    const client = await covel.newTenant();
    const { id } = await client.createSession();
    covel.engine.emulator!.injectFault({ status: 503, times: 2 });
    const { executionId } = await client.submit(id, 'Wait');
    await client.waitFor(executionId, 30_000);
    expect(await client.messages(id)).toHaveLength(2);
  });
});
