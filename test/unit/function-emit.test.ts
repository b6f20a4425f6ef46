import { join } from 'node:path';
import { DEFAULT_HISTORY_READ_LIMIT, rebuildRequests } from '../../libs/engine';
import { behaviour } from '../fixtures/emit-plugins/beacon/server';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';
import { afterExecutionsEnded } from '../support/turns';

const EMIT_PLUGINS = join(__dirname, '..', 'fixtures', 'emit-plugins');

type Data = Record<string, unknown>;

/** The session's events as `{ type, ...data }` once every execution has ended (the activation runs after the turn). */
async function settled(covel: EmbeddedEngine, sessionId: string, executions: number): Promise<Data[]> {
  return (await afterExecutionsEnded(covel.engine, sessionId, executions)).map((e) => ({ type: e.type, ...(e.data as Data) }));
}

describe('ctx.emit in function runtimes: events start their followers as activations (PLUGIN-API.md)', () => {
  let covel: EmbeddedEngine;
  beforeAll(async () => {
    covel = await startEmbedded({ COVEL_PLUGINS_DIR: EMIT_PLUGINS });
  }, 60_000);
  afterAll(() => covel?.stop());

  it('an emission is recorded with the output, and the follower runs after the turn with the payload in <runtime-activation> (bookkeeping dropped); rebuild identical', async () => {
    behaviour.mode = 'emit';
    const client = await covel.newTenant();
    const { id } = await client.createSession({});
    await client.submit(id, 'Light the beacon');
    const events = await settled(covel, id, 2);
    const types = events.map((e) => e.type);
    const activated = events.find((e) => e.type === 'runtime.activated@1')!;
    expect(activated).toMatchObject({ kind: 'event', topic: 'beacon.lit', pluginId: 'watcher', runtimeId: 'watch' });
    // in the same append as the keeper's output, before the turn's commit
    expect(types.indexOf('runtime.activated@1')).toBe(types.indexOf('runtime.output.produced@1') + 1);
    const calls = events.filter((e) => e.type === 'llm.calling@1');
    expect(calls.map((c) => c.runtimeId)).toEqual(['narrator', 'watch']);
    const watch = JSON.stringify(JSON.parse(calls[1].body as string));
    expect(watch).toContain('<runtime-activation>');
    expect(watch).toContain('Amon Dîn 🔥');
    expect(watch).not.toMatch(/2026-12-03T20|1f2e3d4c/);
    expect(events.filter((e) => e.type === 'turn.committed@1')).toHaveLength(2);
    const rebuilt = await rebuildRequests(await covel.engine.store.readStream(id), covel.engine.catalog, covel.engine.providers, covel.engine.worlds, {
      historyReadLimit: DEFAULT_HISTORY_READ_LIMIT,
    });
    expect(rebuilt.map((r) => r.identical)).toEqual([true, true]);
  }, 60_000);

  it.each([
    ['a topic no plugin declares', 'undeclared' as const, 'ctx.emit ("beacon.stolen"): not a topic any loaded plugin declares in contributes.events'],
    ['a run that emits and then throws', 'emit-then-throw' as const, 'threw: the wood was wet'],
    ['a payload that fails the topic’s schema', 'bad-payload' as const, 'ctx.emit(beacon.lit): the payload does not match its schema: /hill: must be string'],
  ])(
    '%s fails the turn naming the plugin, and nothing is emitted',
    async (_, mode, message) => {
      behaviour.mode = mode;
      const client = await covel.newTenant();
      const { id } = await client.createSession({});
      const { executionId } = await client.submit(id, 'Light the beacon');
      await expect(client.waitFor(executionId, 20_000)).rejects.toThrow(message);
      const events = await covel.engine.store.readStream(id);
      expect(events.some((e) => e.type === 'runtime.activated@1')).toBe(false);
      expect(JSON.stringify(events.find((e) => e.type === 'execution.failed@1')!.data)).toContain('plugin beacon: function runtime \\"keeper\\"');
    },
    60_000,
  );
});
